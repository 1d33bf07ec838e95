package implication

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/storage/canonical"
	"github.com/j17-go/j17/tick"
)

// Limits bound the chain of one trigger (the Safety Limits of the Implications Reference).
type Limits struct {
	// MaxDepth is the deepest implied_by.depth allowed; 1 is a direct implication.
	MaxDepth int
	// MaxTotal is the most implied events one trigger event may cause, at every depth.
	MaxTotal int
}

// DefaultLimits are the documented defaults: max_depth 5 and max_total 100.
var DefaultLimits = Limits{MaxDepth: 5, MaxTotal: 100}

// Trigger is one event of the request, as it will be stored.
type Trigger struct {
	Stream storage.StreamKey
	Spec   *spec.Event
	// Data and Metadata are the event's stored JSON.
	Data, Metadata []byte
	Timestamp      int64
}

// ImpliedBy is metadata.implied_by: the event an implied event comes from.
type ImpliedBy struct {
	Key       string `json:"key"`
	EventType string `json:"event_type"`
	Depth     int    `json:"depth"`
}

// Implied is one implied event and the stream it goes to.
type Implied struct {
	Stream storage.StreamKey
	Event  storage.NewEvent
	// Trigger is the index, in the request, of the trigger event the chain started from.
	Trigger int
}

// Match is a resolved cancel_on pattern: an event of EventType on the aggregate Type/ID.
type Match struct {
	AggregateType string `json:"aggregate_type"`
	ID            string `json:"id"`
	EventType     string `json:"event_type"`
}

// Scheduled is a schedule implication resolved against its trigger.
type Scheduled struct {
	// Source is the aggregate of the event that scheduled it.
	Source    storage.StreamKey
	Target    storage.StreamKey
	EventType string
	// Data is the resolved emit data, checked at fire time against the spec then in force.
	Data     []byte
	Delay    time.Duration
	By       ImpliedBy
	CancelOn []Match
}

// Result is everything a request implies.
type Result struct {
	Events    []Implied
	Schedules []Scheduled
}

// StateFunc returns S0 of a stream: its state before the request (an empty object when the
// stream has no events).
type StateFunc func(k storage.StreamKey) (tick.Value, error)

// Expander computes implications under one spec.
type Expander struct {
	Spec   *spec.Spec
	Rules  ident.Rules
	Limits Limits
	State  StateFunc
	// MaxDataDepth bounds the nesting of implied event data, as for client writes.
	MaxDataDepth int
}

// run is the expansion of one request.
type run struct {
	x *Expander
	// first is the state of the first stream read, states those of the others: most requests
	// read one.
	firstKey storage.StreamKey
	first    tick.Value
	states   map[storage.StreamKey]tick.Value
	res      Result
	// trigger, batch and count describe the chain being expanded.
	trigger int
	batch   bool
	count   int
	// arena holds the data of the implied events, each a full slice of its own, so that a map
	// of many items grows one buffer instead of one per event.
	arena []byte
	// parser parses the data and metadata of the run's sources, from parsers.
	parser *tick.Parser
}

// arenaSize is the arena's first capacity: ten implied events of small data fit in it.
const arenaSize = 1024

// source is an event whose implications run: a trigger or an implied event.
type source struct {
	stream   storage.StreamKey
	spec     *spec.Event
	data     []byte
	metadata tick.Value
	actor    []byte
	ts       int64
	depth    int
	// key is stream as "<type>:<id>", made when its implications start to run.
	key string
	// implied is the metadata of the events src implies, made at the first of them.
	implied []byte
}

// Expand returns what triggers imply, in order: each trigger's implications in spec order,
// each implied event followed by what it implies in turn. batch marks refusals with the index
// of the trigger event.
func (x *Expander) Expand(triggers []Trigger, batch bool) (Result, error) {
	r := &run{x: x, batch: batch}
	defer r.releaseParser()
	for i, t := range triggers {
		if len(t.Spec.Implications) == 0 {
			continue
		}
		meta, err := r.parse(t.Metadata)
		if err != nil {
			return Result{}, fmt.Errorf("implication: stored metadata of %s: %w", t.Stream, err)
		}
		r.trigger, r.count = i, 0
		src := source{stream: t.Stream, spec: t.Spec, data: t.Data, metadata: meta, actor: meta.Get("actor").AppendJSON(nil), ts: t.Timestamp}
		if err := r.expand(&src); err != nil {
			return Result{}, r.refuse(err)
		}
	}
	return r.res, nil
}

// parsers keeps the parsers of runs with their arenas. Nothing a run returns holds a Value it
// parsed: implied events and schedules carry their data as JSON, ids and messages as strings,
// which the arenas do not hold (tick.Parser). Under orders of ten items, allocating the
// arenas for every order was 3% of the CPU in process (BenchmarkImplicationWrite, map10/new).
var parsers = sync.Pool{New: func() any { return new(tick.Parser) }}

// parse parses an event's data or metadata with the run's parser.
func (r *run) parse(raw []byte) (tick.Value, error) {
	if r.parser == nil {
		r.parser = parsers.Get().(*tick.Parser)
	}
	return r.parser.Parse(raw)
}

// releaseParser hands the run's parser back once the run is over.
func (r *run) releaseParser() {
	if r.parser != nil {
		r.parser.Reset()
		parsers.Put(r.parser)
		r.parser = nil
	}
}

func (r *run) refuse(err error) error {
	if r.batch {
		return problem.InBatch(err, r.trigger)
	}
	return err
}

func (r *run) state(k storage.StreamKey) (tick.Value, error) {
	if r.firstKey == k {
		return r.first, nil
	}
	if v, ok := r.states[k]; ok {
		return v, nil
	}
	v, err := r.x.State(k)
	if err != nil {
		return tick.Value{}, err
	}
	switch {
	case r.firstKey == storage.StreamKey{}:
		r.firstKey, r.first = k, v
	case r.states == nil:
		r.states = map[storage.StreamKey]tick.Value{k: v}
	default:
		r.states[k] = v
	}
	return v, nil
}

// expand runs the implications of src.
func (r *run) expand(src *source) error {
	data, err := r.parse(src.data)
	if err != nil {
		return fmt.Errorf("implication: data of %s: %w", src.stream, err)
	}
	// S0 is read only for implications that read it: that read may fold the whole stream.
	var st tick.Value
	if src.spec.ImplicationsReadState {
		if st, err = r.state(src.stream); err != nil {
			return err
		}
	}
	src.key = src.stream.String()
	// The scope, its event and room for a map's binding take one allocation.
	all := &struct {
		scope    tick.Scope
		event    tick.Event
		bindings [1]tick.Binding
	}{event: tick.Event{
		Key: src.key, AggregateType: src.stream.Type, ID: src.stream.ID,
		Type: src.spec.Type, Data: data, Metadata: src.metadata,
	}}
	scope := &all.scope
	scope.Event, scope.State, scope.Bindings = &all.event, st, all.bindings[:0]
	for _, im := range src.spec.Implications {
		if err := r.implication(src, im, scope); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) implication(src *source, im *spec.Implication, scope *tick.Scope) error {
	if im.Condition != nil {
		ok, err := im.Condition.Eval(scope)
		if err != nil {
			return refusal(im.Pointer, "condition: %v", err)
		}
		if !ok {
			return nil
		}
	}
	switch im.Kind {
	case spec.KindEmit:
		return r.emit(src, im.Emit, scope, im.Pointer+"/emit")
	case spec.KindMap:
		return r.mapEmit(src, im.Map, scope, im.Pointer+"/map")
	case spec.KindPipeline:
		for _, step := range im.Pipeline {
			if err := r.implication(src, step, scope); err != nil {
				return err
			}
		}
		return nil
	case spec.KindSchedule:
		return r.schedule(src, im.Schedule, scope, im.Pointer+"/schedule")
	}
	// The spec loader refuses every other kind at deploy, with its own message.
	return refusal(im.Pointer, "implication kind %q cannot run on this server", im.Kind)
}

func (r *run) mapEmit(src *source, m *spec.MapImplication, scope *tick.Scope, ptr string) error {
	in := m.In.Resolve(scope)
	switch in.Kind() {
	case tick.KindMissing, tick.KindNull:
		return nil
	case tick.KindArray:
	default:
		return refusalOf(ErrResolve, ptr+"/in", "map.in %q resolved to %s, not an array (use .$entries to iterate an object)", m.In.String(), in.Kind())
	}
	items := in.Items()
	r.res.Events = slices.Grow(r.res.Events, len(items))
	emitPtr := ptr + "/emit"
	for _, item := range items {
		scope.Bind(m.As, item)
		ok := true
		if m.Condition != nil {
			var err error
			if ok, err = m.Condition.Eval(scope); err != nil {
				return refusal(ptr+"/condition", "condition: %v", err)
			}
		}
		var err error
		if ok {
			err = r.emit(src, m.Emit, scope, emitPtr)
		}
		scope.Bindings = scope.Bindings[:len(scope.Bindings)-1]
		if err != nil {
			return err
		}
	}
	return nil
}

// emit resolves, checks and records one implied event, then expands what it implies.
func (r *run) emit(src *source, e *spec.Emit, scope *tick.Scope, ptr string) error {
	depth := src.depth + 1
	if depth > r.x.Limits.MaxDepth {
		return refusalOf(ErrLimit, ptr, "the chain exceeds max_depth %d: %s.%s would be at depth %d; nothing was written", r.x.Limits.MaxDepth, e.AggregateType, e.EventType, depth)
	}
	r.count++
	if r.count > r.x.Limits.MaxTotal {
		return refusalOf(ErrLimit, ptr, "the trigger implies more than max_total %d events; nothing was written", r.x.Limits.MaxTotal)
	}
	target, ev, data, err := r.resolve(e, scope, ptr)
	if err != nil {
		return err
	}
	if err := r.check(ev, data, ptr); err != nil {
		return err
	}
	if src.implied == nil {
		by := ImpliedBy{Key: src.key, EventType: src.spec.Type, Depth: depth}
		// Room for the members' names and numbers, and the strings with a little escaping.
		size := 96 + len(src.actor) + len(by.Key) + len(by.EventType)
		src.implied = appendMetadata(make([]byte, 0, size), src.actor, by, src.ts)
	}
	meta := src.implied
	r.res.Events = append(r.res.Events, Implied{
		Stream: target, Trigger: r.trigger,
		Event: storage.NewEvent{Type: ev.Type, Data: data, Metadata: meta, Timestamp: src.ts},
	})
	if len(ev.Implications) == 0 {
		return nil
	}
	mv, err := r.parse(meta)
	if err != nil {
		return fmt.Errorf("implication: BUG: metadata %s does not parse: %w", meta, err)
	}
	return r.expand(&source{stream: target, spec: ev, data: data, metadata: mv, actor: src.actor, ts: src.ts, depth: depth})
}

// resolve evaluates an emit template: the target stream, its event spec and the data.
func (r *run) resolve(e *spec.Emit, scope *tick.Scope, ptr string) (storage.StreamKey, *spec.Event, []byte, error) {
	agg, ok := r.x.Spec.Aggregate(e.AggregateType)
	if !ok {
		return storage.StreamKey{}, nil, nil, refusal(ptr, "aggregate type %q is not in the spec", e.AggregateType)
	}
	ev, ok := agg.Events[e.EventType]
	if !ok {
		return storage.StreamKey{}, nil, nil, refusal(ptr, "event type %q is not defined on %q", e.EventType, e.AggregateType)
	}
	id, err := r.id(e.ID, e.AggregateType, scope, ptr, "/id")
	if err != nil {
		return storage.StreamKey{}, nil, nil, err
	}
	data := []byte("{}")
	if e.Data != nil {
		if data, err = r.appendData(e.Data, scope, ptr); err != nil {
			return storage.StreamKey{}, nil, nil, err
		}
	}
	return storage.StreamKey{Type: e.AggregateType, ID: id}, ev, data, nil
}

// appendData evaluates a data template into the arena and returns its JSON, capped so that
// nothing written later lands in it.
func (r *run) appendData(t *tick.Template, scope *tick.Scope, ptr string) ([]byte, error) {
	if r.arena == nil {
		r.arena = make([]byte, 0, arenaSize)
	}
	start := len(r.arena)
	out, kind, err := t.AppendJSON(r.arena, scope)
	if err != nil {
		r.arena = r.arena[:start]
		return nil, refusal(ptr+"/data", "data: %v", err)
	}
	if kind != tick.KindObject {
		r.arena = r.arena[:start]
		return nil, refusalOf(ErrResolve, ptr+"/data", "data resolved to %s, not an object", kind)
	}
	r.arena = out
	return out[start:len(out):len(out)], nil
}

// id resolves an aggregate id template and normalizes it like a client's URL id. The docs
// route with "id": "$.key", whose value is a key "<type>:<id>": a value that starts with the
// target's own type and a colon is that key, and its id part is the id. (No identifier kind
// starts with an aggregate type name and a colon, so nothing else is read this way.) A refusal
// points at ptr+field, joined only then.
func (r *run) id(t *tick.Template, typ string, scope *tick.Scope, ptr, field string) (string, error) {
	v, err := t.Eval(scope)
	if err != nil {
		return "", refusal(ptr+field, "id: %v", err)
	}
	var raw string
	switch v.Kind() {
	case tick.KindString:
		raw = v.Str()
	case tick.KindNumber:
		raw = strconv.FormatFloat(v.Num(), 'f', -1, 64)
	default:
		return "", refusalOf(ErrResolve, ptr+field, "id resolved to %s, not a string", v.Kind())
	}
	if rest, ok := strings.CutPrefix(raw, typ+":"); ok {
		raw = rest
	}
	id, _, err := r.x.Rules.Normalize(ident.Key, raw)
	if err != nil {
		return "", refusal(ptr+field, "id %q: %v", raw, err)
	}
	return id, nil
}

// check validates implied data as a client write's data is validated.
func (r *run) check(ev *spec.Event, data []byte, ptr string) error {
	if r.x.MaxDataDepth > 0 && canonical.DeeperThan(data, r.x.MaxDataDepth) {
		return refusal(ptr+"/data", "data nests deeper than %d levels", r.x.MaxDataDepth)
	}
	// data is an object appendData encoded (or {}): a schema that takes every object would only
	// check its syntax again, ten times over for an order of ten items.
	if ev.Schema == nil || ev.Schema.AcceptsEveryObject() {
		return nil
	}
	if err := ev.Schema.ValidateJSON(data); err != nil {
		return refusal(ptr+"/data", "%s.%s data fails its schema: %v", ev.Aggregate, ev.Type, err)
	}
	return nil
}

func (r *run) schedule(src *source, s *spec.Schedule, scope *tick.Scope, ptr string) error {
	target, ev, data, err := r.resolve(s.Emit, scope, ptr+"/emit")
	if err != nil {
		return err
	}
	out := Scheduled{
		// The schedule index keeps the data until the schedule fires: a copy of its own, so
		// that it does not keep the arena alive.
		Source: src.stream, Target: target, EventType: ev.Type, Data: bytes.Clone(data), Delay: s.Delay,
		By: ImpliedBy{Key: src.key, EventType: src.spec.Type, Depth: src.depth + 1},
	}
	for i, c := range s.CancelOn {
		id, err := r.id(c.ID, c.AggregateType, scope, ptr, "/cancel_on/"+strconv.Itoa(i)+"/id")
		if err != nil {
			return err
		}
		out.CancelOn = append(out.CancelOn, Match{AggregateType: c.AggregateType, ID: id, EventType: c.EventType})
	}
	r.res.Schedules = append(r.res.Schedules, out)
	return nil
}
