package spec

import (
	"sort"
)

// Spec is a loaded spec: parsed, validated and compiled. It is never mutated after Load returns,
// so any number of goroutines may read it; a deploy builds a new Spec and the engine swaps it in
// atomically (it holds the current one in an atomic.Pointer). Slices and maps returned by its
// accessors are shared and must not be modified.
type Spec struct {
	text    string // the upload as received
	doc     []byte // the unwrapped spec document
	wrapped bool

	aggregates     map[string]*AggregateType
	aggregateNames []string
	agentTypes     []string
	targetTypes    []string
	singletons     []string
	modules        Modules
	geoTypes       map[string]*GeoType
	projections    map[string]*Projection
	projNames      []string

	sagasByTrigger map[EventRef][]*Saga
	cancelers      map[EventRef][]EventRef
	// implies is the static implication graph: the event types an event type's emit, map and
	// pipeline implications may write in the same request (checked acyclic by Load).
	implies map[EventRef][]EventRef
}

func newSpec(text string) *Spec {
	return &Spec{
		text:           text,
		aggregates:     map[string]*AggregateType{},
		geoTypes:       map[string]*GeoType{},
		projections:    map[string]*Projection{},
		sagasByTrigger: map[EventRef][]*Saga{},
		cancelers:      map[EventRef][]EventRef{},
		implies:        map[EventRef][]EventRef{},
	}
}

// EventRef names an event type of an aggregate type.
type EventRef struct {
	Aggregate string
	Event     string
}

// Document returns the unwrapped spec JSON as uploaded, for storage and for GET.
func (s *Spec) Document() []byte { return s.doc }

// AggregateTypes returns the aggregate type names in sorted order.
func (s *Spec) AggregateTypes() []string { return s.aggregateNames }

// Aggregate returns the aggregate type named name.
func (s *Spec) Aggregate(name string) (*AggregateType, bool) {
	a, ok := s.aggregates[name]
	return a, ok
}

// Event returns the event type ev of the aggregate type agg.
func (s *Spec) Event(agg, ev string) (*Event, bool) {
	a, ok := s.aggregates[agg]
	if !ok {
		return nil, false
	}
	e, ok := a.Events[ev]
	return e, ok
}

// AgentTypes returns agent_types as declared.
func (s *Spec) AgentTypes() []string { return s.agentTypes }

// IsAgentType reports whether t is a declared agent type. The reserved system_agent type is
// not one: callers handle it separately.
func (s *Spec) IsAgentType(t string) bool { return contains(s.agentTypes, t) }

// TargetTypes returns target_types as declared.
func (s *Spec) TargetTypes() []string { return s.targetTypes }

// IsTargetType reports whether t is a declared target type.
func (s *Spec) IsTargetType(t string) bool { return contains(s.targetTypes, t) }

// Singletons returns the declared custom singletons (without the implicit "global").
func (s *Spec) Singletons() []string { return s.singletons }

// IsSingleton reports whether id is "global" or a declared singleton.
func (s *Spec) IsSingleton(id string) bool { return id == "global" || contains(s.singletons, id) }

// Modules returns the modules block.
func (s *Spec) Modules() *Modules { return &s.modules }

// Cached reports whether aggregates of type agg are cached: every type is, unless listed in
// modules.never_cache; without never_cache, the deprecated modules.cache is an opt-in list.
func (s *Spec) Cached(agg string) bool {
	m := &s.modules
	if m.HasNeverCache || !m.HasCache {
		return !contains(m.NeverCache, agg)
	}
	return contains(m.Cache, agg)
}

// Sagas returns the sagas in document order.
func (s *Spec) Sagas() []*Saga { return s.modules.Sagas }

// SagasTriggeredBy returns the sagas that an event ev on an aggregate of type agg starts.
func (s *Spec) SagasTriggeredBy(agg, ev string) []*Saga {
	return s.sagasByTrigger[EventRef{agg, ev}]
}

// CancelsScheduled reports whether writing ev on an aggregate of type agg may cancel a pending
// scheduled event (some cancel_on names it), so that the write path checks only those.
func (s *Spec) CancelsScheduled(agg, ev string) bool {
	return len(s.cancelers[EventRef{agg, ev}]) > 0
}

// Implies returns the event types that writing ev on an aggregate of type agg may imply in
// the same request (through emit, map and pipeline implications, not schedules), each once,
// in document order. The graph has no cycle.
func (s *Spec) Implies(agg, ev string) []EventRef {
	return s.implies[EventRef{agg, ev}]
}

// GeoType returns the geo type named name.
func (s *Spec) GeoType(name string) (*GeoType, bool) {
	g, ok := s.geoTypes[name]
	return g, ok
}

// Projections returns the projection names in sorted order.
func (s *Spec) Projections() []string { return s.projNames }

// Projection returns the projection named name.
func (s *Spec) Projection(name string) (*Projection, bool) {
	p, ok := s.projections[name]
	return p, ok
}

// Cascades reports whether typ's onTombstone cascades in the actor role and in the target role:
// the roles in which transitive discovery looks for an erased entity in typ's streams. Both are
// false for a type the spec does not have.
func (s *Spec) Cascades(typ string) (actor, target bool) {
	a, ok := s.aggregates[typ]
	if !ok {
		return false, false
	}
	return a.OnTombstone.Actor == Cascade, a.OnTombstone.Target == Cascade
}

// TombstoneScanned returns the aggregate types whose onTombstone has at least one cascade
// role, in sorted order: the only types transitive discovery scans.
func (s *Spec) TombstoneScanned() []string {
	var out []string
	for _, name := range s.aggregateNames {
		t := s.aggregates[name].OnTombstone
		if t.Actor == Cascade || t.Target == Cascade {
			out = append(out, name)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
