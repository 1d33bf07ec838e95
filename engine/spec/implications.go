package spec

import (
	"strconv"
	"strings"
	"time"

	"github.com/j17-go/j17/tick"
)

var (
	implicationKinds = []ImplicationKind{KindEmit, KindMap, KindSchedule, KindPipeline, KindWASM, KindBinaryContainer, KindRuntimeContainer}
	// implicationKeys are the kind keys, in implicationKinds order, then "condition".
	implicationKeys = []string{"emit", "map", "schedule", "pipeline", "wasm", "binary_container", "runtime_container", "condition"}
	emitKeys        = []string{"aggregate_type", "id", "event_type", "data"}
	mapKeys         = []string{"in", "as", "emit", "condition"}
	scheduleKeys    = []string{"delay", "delay_ms", "emit", "cancel_on"}
	cancelOnKeys    = []string{"aggregate_type", "id", "event_type"}
	wasmImplKeys    = []string{"blob_name", "entrypoint", "mode"}
	binaryKeys      = []string{"image", "mode"}
	runtimeKeys     = []string{"runtime", "entrypoint", "mode"}
	runtimes        = []string{"node", "elixir", "ruby", "python"}
)

// reservedBindings have a meaning of their own in paths.
var reservedBindings = []string{"$prev", "$context", "$error", "$entries", "$key"}

// Delay bounds of scheduled implications (the Scheduled Events page's limits).
const (
	MinScheduleDelay = 5 * time.Minute
	MaxScheduleDelay = 365 * 24 * time.Hour
)

// edge is one static implication: writing from implies writing to in the same request.
type edge struct {
	from, to EventRef
	ptr      string
	off      int
}

func (l *loader) implications(from EventRef, n *node, ptr string) []*Implication {
	if !l.want(n, ptr, kindArray, "implications") {
		return nil
	}
	out := make([]*Implication, 0, len(n.elems))
	for i, e := range n.elems {
		if im := l.implication(from, e, index(ptr, i), true); im != nil {
			out = append(out, im)
		}
	}
	return out
}

// implication checks one implication object, or a pipeline step when top is false (a step
// cannot be another pipeline).
func (l *loader) implication(from EventRef, n *node, ptr string, top bool) *Implication {
	what := "an implication"
	if !top {
		what = "a pipeline step"
	}
	if !l.want(n, ptr, kindObject, what) {
		return nil
	}
	errs := l.r.count()
	var found []member
	for _, m := range n.members {
		if contains(implicationKeys[:len(implicationKinds)], m.key) {
			found = append(found, m)
		} else if m.key != "condition" {
			l.unknownKey(ptr, m, what, implicationKeys)
		}
	}
	switch len(found) {
	case 0:
		l.errorf(ptr, n.start, "%s needs exactly one of %s", what, quoteList(implicationKeys[:len(implicationKinds)]))
		return nil
	case 1:
	default:
		l.errorf(join(ptr, found[1].key), found[1].keyAt, "%s has both %q and %q; split it into two implications", what, found[0].key, found[1].key)
		return nil
	}
	im := &Implication{Kind: ImplicationKind(found[0].key), Pointer: ptr}
	if c := n.get("condition"); c != nil {
		im.Condition = l.predicate(c, join(ptr, "condition"), tick.TemplateOptions{})
	}
	v, p, off := found[0].val, join(ptr, found[0].key), found[0].keyAt
	switch im.Kind {
	case KindEmit:
		im.Emit = l.emit(v, p, tick.TemplateOptions{}, "emit")
		l.addEdge(from, im.Emit, p, off)
	case KindMap:
		im.Map = l.mapImplication(from, v, p)
	case KindSchedule:
		im.Schedule = l.schedule(from, v, p)
	case KindPipeline:
		if !top {
			l.errorf(p, off, "a pipeline step cannot be another pipeline; list its steps in this pipeline instead")
			return nil
		}
		im.Pipeline = l.pipeline(from, v, p)
	case KindWASM:
		im.WASM = l.wasm(v, p, wasmImplKeys, DefaultImplicationEntrypoint)
		l.markUnsupported(im.WASM != nil, p, off, featureWASMImplication)
	case KindBinaryContainer:
		im.BinaryContainer = l.binaryContainer(v, p)
		l.markUnsupported(im.BinaryContainer != nil, p, off, featureBinaryContainer)
	case KindRuntimeContainer:
		im.RuntimeContainer = l.runtimeContainer(v, p)
		l.markUnsupported(im.RuntimeContainer != nil, p, off, featureRuntimeContainer)
	}
	if l.r.count() > errs {
		return nil
	}
	return im
}

func (l *loader) markUnsupported(ok bool, ptr string, off int, f feature) {
	if ok {
		l.unsupported = append(l.unsupported, unsupportedUse{ptr: ptr, off: off, feature: f})
	}
}

func (l *loader) addEdge(from EventRef, e *Emit, ptr string, off int) {
	if e != nil {
		l.edges = append(l.edges, edge{from: from, to: EventRef{e.AggregateType, e.EventType}, ptr: ptr, off: off})
	}
}

// emit checks an emit template: a target that the spec declares, an id and optional data.
func (l *loader) emit(n *node, ptr string, opts tick.TemplateOptions, what string) *Emit {
	errs := l.r.count()
	if !l.object(n, ptr, what, emitKeys...) {
		return nil
	}
	e := &Emit{}
	e.AggregateType, e.EventType = l.target(n, ptr, what, false)
	if v := l.required(n, ptr, "id", what); v != nil {
		e.ID = l.idTemplate(v, join(ptr, "id"), opts)
	}
	if v := n.get("data"); v != nil {
		e.Data = l.dataTemplate(v, join(ptr, "data"), opts)
	}
	if l.r.count() > errs {
		return nil
	}
	return e
}

// target checks aggregate_type and event_type of an emit or cancel_on block. A reserved event
// type can be watched (watch true) but never emitted.
func (l *loader) target(n *node, ptr, what string, watch bool) (string, string) {
	var agg, ev string
	var aggOK bool
	if v := l.required(n, ptr, "aggregate_type", what); v != nil {
		p := join(ptr, "aggregate_type")
		if s, ok := l.nonEmptyString(v, p, "aggregate_type"); ok {
			if _, known := l.names[s]; !known {
				l.errorf(p, v.start, "aggregate type %q is not defined in aggregate_types; add it or fix the name", s)
			} else {
				agg, aggOK = s, true
			}
		}
	}
	if v := l.required(n, ptr, "event_type", what); v != nil {
		p := join(ptr, "event_type")
		if s, ok := l.nonEmptyString(v, p, "event_type"); ok && aggOK {
			switch {
			case !l.names[agg][s]:
				l.errorf(p, v.start, "event type %q is not defined on aggregate type %q; add it to its events or fix the name", s, agg)
			case !watch && s[0] == '_':
				l.errorf(p, v.start, "event type %q is reserved for the system and cannot be emitted", s)
			default:
				ev = s
			}
		}
	}
	return agg, ev
}

func (l *loader) idTemplate(n *node, ptr string, opts tick.TemplateOptions) *tick.Template {
	switch {
	case n.kind == kindString && n.str == "":
		l.errorf(ptr, n.start, "id must not be empty: give a literal id or a path such as \"$.data.user_id\"")
		return nil
	case n.kind != kindString && n.kind != kindObject:
		l.errorf(ptr, n.start, "id must be a literal id or a path string (or a template operator), not %s", n.kind)
		return nil
	}
	return l.template(n, ptr, opts, "id")
}

// dataTemplate checks that event data will be an object: an object template, a template
// operator, or a path.
func (l *loader) dataTemplate(n *node, ptr string, opts tick.TemplateOptions) *tick.Template {
	if n.kind != kindObject && (n.kind != kindString || !strings.HasPrefix(n.str, "$") && !strings.HasPrefix(n.str, "@")) {
		l.errorf(ptr, n.start, "data must be an object (or a path to one, such as \"$.data\"), not %s", n.kind)
		return nil
	}
	return l.template(n, ptr, opts, "data")
}

func (l *loader) template(n *node, ptr string, opts tick.TemplateOptions, what string) *tick.Template {
	t, err := tick.CompileTemplate(l.raw(n), opts)
	if err != nil {
		l.tickErrors(err, n, ptr, what)
		return nil
	}
	return t
}

func (l *loader) predicate(n *node, ptr string, opts tick.TemplateOptions) *tick.Predicate {
	if !l.want(n, ptr, kindObject, "condition") {
		return nil
	}
	p, err := tick.CompilePredicateWith(l.raw(n), opts)
	if err != nil {
		l.tickErrors(err, n, ptr, "condition")
		return nil
	}
	return p
}

func (l *loader) path(n *node, ptr, what string) (tick.Path, bool) {
	s, ok := l.nonEmptyString(n, ptr, what)
	if !ok {
		return tick.Path{}, false
	}
	p, err := tick.ParsePath(s)
	if err != nil {
		l.tickErrors(err, n, ptr, what)
		return tick.Path{}, false
	}
	return p, true
}

func (l *loader) mapImplication(from EventRef, n *node, ptr string) *MapImplication {
	if !l.object(n, ptr, "map", mapKeys...) {
		return nil
	}
	m := &MapImplication{}
	if v := l.required(n, ptr, "in", "map"); v != nil {
		m.In, _ = l.path(v, join(ptr, "in"), "map.in")
	}
	if v := l.required(n, ptr, "as", "map"); v != nil {
		m.As, _ = l.binding(v, join(ptr, "as"), "map.as")
	}
	opts := tick.TemplateOptions{Item: m.As == "$item"}
	if m.As != "" {
		opts.Bindings = []string{m.As}
	}
	if v := n.get("condition"); v != nil {
		m.Condition = l.predicate(v, join(ptr, "condition"), opts)
	}
	if v := l.required(n, ptr, "emit", "map"); v != nil {
		p := join(ptr, "emit")
		m.Emit = l.emit(v, p, opts, "map.emit")
		l.addEdge(from, m.Emit, p, n.keyOffset("emit"))
	}
	return m
}

// binding checks a variable name such as "$item".
func (l *loader) binding(n *node, ptr, what string) (string, bool) {
	s, ok := l.str(n, ptr, what)
	if !ok {
		return "", false
	}
	if len(s) < 2 || s[0] != '$' || !isSlug(s[1:]) {
		l.errorf(ptr, n.start, "%s must be a variable name such as \"$item\", not %q", what, s)
		return "", false
	}
	if contains(reservedBindings, s) {
		l.errorf(ptr, n.start, "%s %q is a reserved name; use another, such as \"$item\"", what, s)
		return "", false
	}
	return s, true
}

func (l *loader) schedule(from EventRef, n *node, ptr string) *Schedule {
	if !l.object(n, ptr, "schedule", scheduleKeys...) {
		return nil
	}
	s := &Schedule{}
	ds, ms := n.get("delay"), n.get("delay_ms")
	switch {
	case ds == nil && ms == nil:
		l.errorf(ptr, n.start, "schedule needs \"delay\" (such as \"24h\") or \"delay_ms\"")
	case ds != nil && ms != nil:
		l.errorf(join(ptr, "delay_ms"), n.keyOffset("delay_ms"), "schedule has both \"delay\" and \"delay_ms\"; keep one")
	case ds != nil:
		s.Delay = l.delay(ds, join(ptr, "delay"))
	default:
		if v, ok := l.integer(ms, join(ptr, "delay_ms"), "delay_ms", 0, 1<<53); ok {
			s.Delay = l.delayRange(msDuration(v), ms, join(ptr, "delay_ms"))
		}
	}
	if v := l.required(n, ptr, "emit", "schedule"); v != nil {
		s.Emit = l.emit(v, join(ptr, "emit"), tick.TemplateOptions{}, "schedule.emit")
	}
	if v := n.get("cancel_on"); v != nil {
		s.CancelOn = l.cancelOn(v, join(ptr, "cancel_on"))
		for _, c := range s.CancelOn {
			ref := EventRef{c.AggregateType, c.EventType}
			l.s.cancelers[ref] = append(l.s.cancelers[ref], from)
		}
	}
	return s
}

// delay parses "<n>s|m|h|d" of the Scheduled Events page.
func (l *loader) delay(n *node, ptr string) time.Duration {
	s, ok := l.str(n, ptr, "delay")
	if !ok {
		return 0
	}
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}
	if len(s) < 2 {
		l.errorf(ptr, n.start, "delay %q must be a number followed by s, m, h or d, such as \"30m\" or \"7d\"", s)
		return 0
	}
	unit, known := units[s[len(s)-1]]
	v, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if !known || err != nil || v < 0 || s[0] == '+' {
		l.errorf(ptr, n.start, "delay %q must be a number followed by s, m, h or d, such as \"30m\" or \"7d\"", s)
		return 0
	}
	if v > int64(MaxScheduleDelay/unit) {
		return l.delayRange(MaxScheduleDelay+1, n, ptr)
	}
	return l.delayRange(time.Duration(v)*unit, n, ptr)
}

func (l *loader) delayRange(d time.Duration, n *node, ptr string) time.Duration {
	switch {
	case d < MinScheduleDelay:
		l.errorf(ptr, n.start, "a scheduled delay must be at least 5 minutes (\"5m\", 300000 ms); use an implication for immediate events")
	case d > MaxScheduleDelay:
		l.errorf(ptr, n.start, "a scheduled delay must be at most 1 year (\"365d\")")
	default:
		return d
	}
	return 0
}

func (l *loader) cancelOn(n *node, ptr string) []CancelOn {
	if !l.want(n, ptr, kindArray, "cancel_on") {
		return nil
	}
	out := make([]CancelOn, 0, len(n.elems))
	for i, e := range n.elems {
		p := index(ptr, i)
		if !l.object(e, p, "a cancel_on entry", cancelOnKeys...) {
			continue
		}
		var c CancelOn
		c.AggregateType, c.EventType = l.target(e, p, "a cancel_on entry", true)
		if v := l.required(e, p, "id", "a cancel_on entry"); v != nil {
			c.ID = l.idTemplate(v, join(p, "id"), tick.TemplateOptions{})
		}
		out = append(out, c)
	}
	return out
}

func (l *loader) pipeline(from EventRef, n *node, ptr string) []*Implication {
	if !l.want(n, ptr, kindArray, "pipeline") {
		return nil
	}
	if len(n.elems) == 0 {
		l.errorf(ptr, n.start, "pipeline must list at least one step")
		return nil
	}
	out := make([]*Implication, 0, len(n.elems))
	for i, e := range n.elems {
		if im := l.implication(from, e, index(ptr, i), false); im != nil {
			out = append(out, im)
		}
	}
	return out
}

func (l *loader) binaryContainer(n *node, ptr string) *BinaryContainer {
	errs := l.r.count()
	if !l.object(n, ptr, "binary_container", binaryKeys...) {
		return nil
	}
	b := &BinaryContainer{Mode: ModeEmit}
	if v := l.required(n, ptr, "image", "binary_container"); v != nil {
		b.Image, _ = l.nonEmptyString(v, join(ptr, "image"), "image")
	}
	if v := n.get("mode"); v != nil {
		b.Mode = l.mode(v, join(ptr, "mode"))
	}
	if l.r.count() > errs {
		return nil
	}
	return b
}

func (l *loader) runtimeContainer(n *node, ptr string) *RuntimeContainer {
	errs := l.r.count()
	if !l.object(n, ptr, "runtime_container", runtimeKeys...) {
		return nil
	}
	rc := &RuntimeContainer{Mode: ModeEmit}
	if v := l.required(n, ptr, "runtime", "runtime_container"); v != nil {
		p := join(ptr, "runtime")
		if s, ok := l.str(v, p, "runtime"); ok {
			if !contains(runtimes, s) {
				l.errorf(p, v.start, "runtime must be one of %s, not %q", quoteList(runtimes), s)
			}
			rc.Runtime = s
		}
	}
	if v := l.required(n, ptr, "entrypoint", "runtime_container"); v != nil {
		rc.Entrypoint, _ = l.nonEmptyString(v, join(ptr, "entrypoint"), "entrypoint")
	}
	if v := n.get("mode"); v != nil {
		rc.Mode = l.mode(v, join(ptr, "mode"))
	}
	if l.r.count() > errs {
		return nil
	}
	return rc
}
