package spec

import (
	"strings"

	"github.com/j17-go/j17/engine/schema"
	"github.com/j17-go/j17/tick"
)

var (
	aggregateKeys   = []string{"events", "onTombstone"}
	eventKeys       = []string{"schema", "handler", "implications", "allow_skip_occ", "geo"}
	onTombstoneKeys = []string{"actor", "target"}
)

func (l *loader) aggregateTypes(n *node, ptr string) {
	if !l.want(n, ptr, kindObject, "aggregate_types") {
		return
	}
	for _, m := range n.members {
		p := join(ptr, m.key)
		switch {
		case strings.HasPrefix(m.key, "_"):
			l.errorf(p, m.keyAt, "aggregate type %q must not start with '_' (reserved for system routes); rename it", m.key)
			continue
		case !validName(m.key):
			l.errorf(p, m.keyAt, "aggregate type %q may use only letters, digits, '_' and '-' (at most %d characters); rename it", m.key, maxNameLen)
			continue
		}
		if a := l.aggregate(m.key, m.val, p); a != nil {
			l.s.aggregates[m.key] = a
		}
	}
}

func (l *loader) aggregate(name string, n *node, ptr string) *AggregateType {
	what := "aggregate type " + quote(name)
	if !l.object(n, ptr, what, aggregateKeys...) {
		return nil
	}
	a := &AggregateType{Name: name, Events: map[string]*Event{}}
	if v := n.get("onTombstone"); v != nil {
		a.OnTombstone = l.onTombstone(v, join(ptr, "onTombstone"))
	}
	evs := l.required(n, ptr, "events", what)
	if evs == nil {
		return a
	}
	ep := join(ptr, "events")
	if !l.want(evs, ep, kindObject, what+" events") {
		return a
	}
	for _, m := range evs.members {
		p := join(ep, m.key)
		reserved := strings.HasPrefix(m.key, "_")
		if !validName(strings.TrimPrefix(m.key, "_")) {
			l.errorf(p, m.keyAt, "event type %q may use only letters, digits, '_' and '-' (at most %d characters); rename it", m.key, maxNameLen)
			continue
		}
		if e := l.event(name, m.key, reserved, m.val, p); e != nil {
			a.Events[m.key] = e
			a.EventTypes = append(a.EventTypes, m.key)
		}
	}
	return a
}

func (l *loader) onTombstone(n *node, ptr string) OnTombstone {
	t := OnTombstone{Configured: true, Actor: Preserve, Target: Preserve}
	if !l.object(n, ptr, "onTombstone", onTombstoneKeys...) {
		return t
	}
	for _, role := range onTombstoneKeys {
		v := n.get(role)
		if v == nil {
			continue
		}
		p := join(ptr, role)
		s, ok := l.str(v, p, "onTombstone."+role)
		if !ok {
			continue
		}
		rule := TombstoneRule(s)
		if rule != Cascade && rule != Preserve {
			l.errorf(p, v.start, "onTombstone.%s must be \"cascade\" or \"preserve\", not %q", role, s)
			continue
		}
		if role == "actor" {
			t.Actor = rule
		} else {
			t.Target = rule
		}
	}
	return t
}

func (l *loader) event(agg, name string, reserved bool, n *node, ptr string) *Event {
	what := "event type " + quote(agg+"."+name)
	if !l.object(n, ptr, what, eventKeys...) {
		return nil
	}
	e := &Event{Aggregate: agg, Type: name, Reserved: reserved}
	if sn := n.get("schema"); sn != nil {
		sp := join(ptr, "schema")
		if reserved {
			l.errorf(sp, n.keyOffset("schema"), "reserved event type %q must not define a schema (the system owns its format); remove \"schema\"", name)
		} else {
			e.Schema = l.schema(sn, sp)
		}
	} else if !reserved {
		l.errorf(ptr, n.start, "%s is missing the required key \"schema\" (a JSON Schema for its data, e.g. {\"type\": \"object\"})", what)
	}
	if hn := n.get("handler"); hn != nil {
		l.handler(e, hn, join(ptr, "handler"))
	} else if !reserved {
		l.errorf(ptr, n.start, "%s is missing the required key \"handler\" (use [] for an event that does not change state)", what)
	}
	if v := n.get("allow_skip_occ"); v != nil {
		e.AllowSkipOCC, _ = l.boolean(v, join(ptr, "allow_skip_occ"), "allow_skip_occ")
	}
	if v := n.get("geo"); v != nil {
		e.Geo = l.geo(v, join(ptr, "geo"))
	}
	if v := n.get("implications"); v != nil {
		e.Implications = l.implications(EventRef{agg, name}, v, join(ptr, "implications"))
	}
	return e
}

func (l *loader) schema(n *node, ptr string) *schema.Schema {
	if !l.want(n, ptr, kindObject, "schema") {
		return nil
	}
	s, issues := schema.Compile(l.raw(n))
	for _, is := range issues {
		p, off := locate(n, ptr, is.Pointer)
		l.errorf(p, off, "%s", is.Message)
	}
	if len(issues) > 0 {
		return nil
	}
	return s
}

var wasmHandlerKeys = []string{"blob_name", "entrypoint", "timeout_ms"}

func (l *loader) handler(e *Event, n *node, ptr string) {
	if n.kind == kindObject && n.get("wasm") != nil {
		if len(n.members) != 1 {
			l.object(n, ptr, "a WASM handler", "wasm")
			return
		}
		e.WASM = l.wasm(n.get("wasm"), join(ptr, "wasm"), wasmHandlerKeys, DefaultHandlerEntrypoint)
		if e.WASM != nil {
			l.unsupported = append(l.unsupported, unsupportedUse{ptr: join(ptr, "wasm"), off: n.keyOffset("wasm"), feature: featureWASMHandler})
		}
		return
	}
	if n.kind != kindArray && n.kind != kindObject {
		l.errorf(ptr, n.start, "handler must be an array of operations, one operation, or {\"wasm\": ...}, not %s", n.kind)
		return
	}
	h, err := tick.CompileHandler(l.raw(n))
	if err != nil {
		l.tickErrors(err, n, ptr, "handler")
		return
	}
	e.Handler = h
}

// wasm checks the short ("blob.wasm") and long ({"blob_name": ...}) forms of a WASM config.
func (l *loader) wasm(n *node, ptr string, keys []string, entry string) *WASMConfig {
	cfg := &WASMConfig{Entrypoint: entry}
	if contains(keys, "timeout_ms") {
		cfg.Timeout = DefaultWASMTimeout
	} else {
		cfg.Mode = ModeEmit
	}
	if n.kind == kindString {
		name, ok := l.nonEmptyString(n, ptr, "wasm blob name")
		if !ok {
			return nil
		}
		cfg.BlobName = name
		return cfg
	}
	if n.kind != kindObject {
		l.errorf(ptr, n.start, "wasm must be a blob name string or an object with \"blob_name\", not %s", n.kind)
		return nil
	}
	errs := l.r.count()
	if !l.object(n, ptr, "a wasm config", keys...) {
		return nil
	}
	if v := l.required(n, ptr, "blob_name", "a wasm config"); v != nil {
		cfg.BlobName, _ = l.nonEmptyString(v, join(ptr, "blob_name"), "blob_name")
	}
	if v := n.get("entrypoint"); v != nil {
		cfg.Entrypoint, _ = l.nonEmptyString(v, join(ptr, "entrypoint"), "entrypoint")
	}
	if v := n.get("timeout_ms"); v != nil {
		ms, ok := l.integer(v, join(ptr, "timeout_ms"), "timeout_ms", 1, maxWASMTimeoutMS)
		if ok {
			cfg.Timeout = msDuration(ms)
		}
	}
	if v := n.get("mode"); v != nil {
		cfg.Mode = l.mode(v, join(ptr, "mode"))
	}
	if l.r.count() > errs {
		return nil
	}
	return cfg
}

// maxWASMTimeoutMS bounds a WASM handler's execution time (bad input cannot hurt).
const maxWASMTimeoutMS = 10_000

func (l *loader) mode(n *node, ptr string) Mode {
	s, ok := l.str(n, ptr, "mode")
	if !ok {
		return ""
	}
	m := Mode(s)
	if m != ModeEmit && m != ModeTransform {
		l.errorf(ptr, n.start, "mode must be \"emit\" or \"transform\", not %q", s)
		return ""
	}
	return m
}
