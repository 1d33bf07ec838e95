package tick

// Binding is a named value: "$item" in map, filter, every and some, a name
// chosen with "as", or a variable bound by let.
type Binding struct {
	Name  string // with its "$", e.g. "$address"
	Value Value
}

// Scope is everything a predicate or template can read.
type Scope struct {
	Event *Event // "$"; nil reads as an event with empty fields
	State Value  // "@"
	// Prev, Context and Error are the saga bindings "$prev" ({"type", "data"}),
	// "$context" (step name -> that step's result) and "$error"
	// ({"message", "step"}).
	Prev, Context, Error Value
	// Extra holds further members of "$" (for example context enriched by a
	// pipeline's transform step); "$.name" looks here when name is not one of
	// key, id, type, data, metadata or state.
	Extra    Value
	Bindings []Binding

	// before is the state before the event, which "$.state" means inside a
	// handler (the Handlers page); elsewhere "$.state" is an alias of "@".
	before    Value
	hasBefore bool
	// tsNum caches the event's metadata.timestamp, which a handler reads
	// and stamping reads again, when it is a number (kept apart from a Value
	// so that caching stores no pointer). Only a run, which owns its Scope
	// and does not change the event under it, enables the cache.
	tsNum   float64
	tsState uint8
}

const (
	tsOff       = iota // no caching: the caller may change Event at will
	tsCacheable        // not read yet, or not a number
	tsCached
)

// timestamp returns the event's metadata.timestamp, from the cache when the
// scope has one.
func (s *Scope) timestamp() Value {
	if s.tsState == tsCached {
		return Value{kind: KindNumber, num: s.tsNum}
	}
	if s.Event == nil {
		return Value{}
	}
	var v Value
	if md := &s.Event.Metadata; md.kind == KindObject && md.n.lz == nil {
		// The lookup written out: this runs once an event, and a call
		// per level was most of its cost.
		ms := md.n.members
		for i := range ms {
			if sameString(ms[i].Key, "timestamp") {
				v = ms[i].Value
				break
			}
		}
	} else {
		v = md.Get("timestamp")
	}
	if v.kind == KindNumber && s.tsState == tsCacheable {
		s.tsNum, s.tsState = v.num, tsCached
	}
	return v
}

// Bind adds a binding; a later binding of the same name hides earlier ones.
func (s *Scope) Bind(name string, v Value) {
	s.Bindings = append(s.Bindings, Binding{Name: name, Value: v})
}

func (s *Scope) lookup(name string) Value {
	for i := len(s.Bindings) - 1; i >= 0; i-- {
		if s.Bindings[i].Name == name {
			return s.Bindings[i].Value
		}
	}
	return Value{}
}
