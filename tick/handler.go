package tick

// Limits on one event type's handler, checked at compile time.
const (
	// MaxOperations bounds the operations of one handler, counting every
	// operation object: an if, a map or a let counts one, and each operation
	// inside then, else and apply counts too.
	MaxOperations = 100
	// MaxNesting bounds how deep operation lists nest: the handler's own list
	// is level 0, the then/else of a top-level if (or the apply of a
	// top-level map) level 1, and so on up to 5.
	MaxNesting = 5
)

type opCode uint8

const (
	opSet opCode = iota
	opMerge
	opAppend
	opRemove
	opIncrement
	opFilter
	opMap
	opUpdateWhere
	opUpsert
	opAppendUnique
	opSetAt
	opMergeAt
	opRemoveAt
	opIncrementAt
	opIf
	opLet
)

// op is one compiled operation. Which fields matter depends on code.
type op struct {
	code     opCode
	ptr      string
	target   []string
	value    expr // value, by, or update_where's merge
	key      expr // *_at key; let's array source; upsert's match value
	pred     *pred
	then     []op
	els      []op
	as       string
	field    string  // append_unique uniqueField, upsert and let match field
	sign     float64 // +1 increment, -1 decrement
	byValue  bool    // remove by value
	optional bool    // value is an optional path
	keeps    textUse // what of the event's text the values it stores may hold
}

// textUse says what of an event's text an operation may store into state,
// so that a replay copies event text out of the caller's buffer only when
// something will keep it (see Replayer.ApplyJSON).
type textUse uint8

const (
	keepsNothing   textUse = iota // literals, the state, numbers
	keepsTimestamp                // "$.metadata.timestamp": nothing once read as a number
	keepsData                     // paths under "$.data" only
	keepsEvent                    // anything else: other members of "$", bindings
)

// opKeeps classifies what o may store. Increment, remove, filter and if
// store no value of their own (an if's branches are classified op by op);
// the others store their value, and the key of *_at and let may end up in
// state too.
func opKeeps(o *op) textUse {
	switch o.code {
	case opIncrement, opRemove, opFilter, opIf, opRemoveAt, opMap:
		return keepsNothing
	}
	return max(exprKeeps(&o.value), exprKeeps(&o.key))
}

func exprKeeps(e *expr) textUse {
	if e.kind == exPath {
		p := e.path
		switch {
		case p.root == rootState, p.root == rootEvent && p.field == evState:
			return keepsNothing
		case p.root == rootEvent && p.fast == fastTimestamp:
			return keepsTimestamp
		case p.root == rootEvent && p.field == evData:
			return keepsData
		}
		return keepsEvent
	}
	u := keepsNothing
	for i := range e.kids {
		u = max(u, exprKeeps(&e.kids[i]))
	}
	return u
}

// Handler is a compiled handler: the operations of one event type.
type Handler struct {
	ops   []op
	count int
	// before: the handler reads "$.state", the state before the event, so a
	// run must keep that state unchanged.
	before bool
}

// Operations returns the number of operations, counted as MaxOperations says.
func (h *Handler) Operations() int { return h.count }

// CompileHandler compiles a handler: an array of operations, or a single
// operation object. The error is Errors, every problem with its JSON Pointer
// ("/2/set/value") relative to raw.
func CompileHandler(raw []byte) (*Handler, error) {
	var c compiler
	v, ok := c.parse(raw)
	if !ok {
		return nil, c.err()
	}
	return compileHandler(&c, v)
}

// CompileHandlerValue compiles a handler already parsed.
func CompileHandlerValue(v Value) (*Handler, error) {
	var c compiler
	return compileHandler(&c, v)
}

func compileHandler(c *compiler, v Value) (*Handler, error) {
	h := &Handler{}
	if v.kind == KindObject {
		h.ops = c.ops(Array(v), "", 0, &h.count)
		for i := range c.errs {
			c.errs[i].Pointer = trimFirstIndex(c.errs[i].Pointer)
		}
	} else {
		h.ops = c.ops(v, "", 0, &h.count)
	}
	h.before = c.before
	if h.count > MaxOperations {
		c.errorf("", "handler has %d operations; at most %d are allowed (nested operations count)", h.count, MaxOperations)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	return h, nil
}

// trimFirstIndex maps "/0/set" to "/set" for a handler given as one object.
func trimFirstIndex(p string) string {
	if len(p) >= 2 && p[:2] == "/0" {
		return p[2:]
	}
	return p
}

var valueOps = map[string]opCode{"set": opSet, "merge": opMerge, "append": opAppend}

var opNames = "set, merge, append, remove, increment, decrement, filter, map, update_where, upsert, append_unique, set_at, merge_at, remove_at, increment_at, if/then/else (conditional), let"

func (c *compiler) ops(v Value, ptr string, level int, count *int) []op {
	if v.kind != KindArray {
		c.errorf(ptr, "operations must be an array, not %s", v.kind)
		return nil
	}
	if level > MaxNesting {
		c.errorf(ptr, "operations nested deeper than %d levels of if/map", MaxNesting)
		return nil
	}
	out := make([]op, 0, len(v.n.m().items))
	for i, it := range v.n.m().items {
		*count++
		if o, ok := c.op(it, index(ptr, i), level, count); ok {
			o.keeps = opKeeps(&o)
			out = append(out, o)
		}
	}
	return out
}

func (c *compiler) op(v Value, ptr string, level int, count *int) (op, bool) {
	if v.kind != KindObject {
		c.errorf(ptr, "an operation must be an object, not %s", v.kind)
		return op{}, false
	}
	if v.n.m().find("if") >= 0 {
		return c.conditional(v, ptr, level, count)
	}
	if len(v.n.m().members) != 1 {
		c.errorf(ptr, "an operation is an object with one key (%s)", opNames)
		return op{}, false
	}
	name, body := v.n.m().members[0].Key, v.n.m().members[0].Value
	p := child(ptr, name)
	o := op{ptr: p, sign: 1}
	switch name {
	case "set", "merge", "append":
		o.code = valueOps[name]
		if !c.fields(body, p, name, []string{"target", "value"}, nil) {
			return o, false
		}
		return c.withTargetValue(o, body, p, "value")
	case "increment", "decrement":
		o.code = opIncrement
		if name == "decrement" {
			o.sign = -1
		}
		if !c.fields(body, p, name, []string{"target"}, []string{"by", "value"}) {
			return o, false
		}
		return c.withBy(o, body, p, name)
	case "remove":
		o.code = opRemove
		if !c.fields(body, p, name, []string{"target"}, []string{"value", "where", "match", "as"}) {
			return o, false
		}
		n := 0
		for _, k := range []string{"value", "where", "match"} {
			if body.n.m().find(k) >= 0 {
				n++
			}
		}
		if n != 1 {
			c.errorf(p, "remove takes exactly one of \"value\", \"where\" or \"match\"")
			return o, false
		}
		if body.n.m().find("value") >= 0 {
			o.byValue = true
			return c.withTargetValue(o, body, p, "value")
		}
		o.target, _ = c.statePath(body.Get("target"), child(p, "target"))
		if w := body.Get("where"); w.kind != KindMissing {
			as := c.asName(body, p)
			pr := c.fieldPred(w, child(p, "where"), as, false)
			o.pred, o.as = &pr, as
		} else {
			kids, as := c.itemPred(body, p, "match", 0)
			o.pred, o.as = &kids[0], as
		}
		return o, true
	case "filter":
		o.code = opFilter
		if !c.fields(body, p, name, []string{"target", "keep"}, []string{"as"}) {
			return o, false
		}
		o.target, _ = c.statePath(body.Get("target"), child(p, "target"))
		kids, as := c.itemPred(body, p, "keep", 0)
		o.pred, o.as = &kids[0], as
		return o, true
	case "map":
		o.code = opMap
		if !c.fields(body, p, name, []string{"target", "apply"}, []string{"as"}) {
			return o, false
		}
		o.target, _ = c.statePath(body.Get("target"), child(p, "target"))
		o.as = c.asName(body, p)
		n := len(c.bindings)
		c.bindings = append(c.bindings, o.as)
		o.then = c.ops(body.Get("apply"), child(p, "apply"), level+1, count)
		c.bindings = c.bindings[:n]
		return o, true
	case "update_where":
		o.code = opUpdateWhere
		if !c.fields(body, p, name, []string{"target", "match", "merge"}, []string{"as"}) {
			return o, false
		}
		o.target, _ = c.statePath(body.Get("target"), child(p, "target"))
		kids, as := c.itemPred(body, p, "match", 0)
		o.pred, o.as = &kids[0], as
		n := len(c.bindings)
		c.bindings = append(c.bindings, as)
		o.value = c.expr(body.Get("merge"), child(p, "merge"), 0)
		c.bindings = c.bindings[:n]
		if mv := body.Get("merge"); mv.kind != KindObject {
			c.errorf(child(p, "merge"), "merge takes an object")
		}
		return o, true
	case "upsert":
		o.code = opUpsert
		if !c.fields(body, p, name, []string{"target", "match", "value"}, nil) {
			return o, false
		}
		m := body.Get("match")
		if m.kind != KindObject || len(m.n.m().members) != 1 {
			c.errorf(child(p, "match"), "upsert match takes a single {\"field\": value} pair")
			return o, false
		}
		o.field = m.n.m().members[0].Key
		o.key = c.expr(m.n.m().members[0].Value, child(child(p, "match"), o.field), 0)
		return c.withTargetValue(o, body, p, "value")
	case "append_unique":
		o.code = opAppendUnique
		if !c.fields(body, p, name, []string{"target", "value"}, []string{"uniqueField"}) {
			return o, false
		}
		if u := body.Get("uniqueField"); u.kind != KindMissing {
			if u.kind != KindString || u.str == "" {
				c.errorf(child(p, "uniqueField"), "uniqueField takes a field name")
			}
			o.field = u.str
		}
		return c.withTargetValue(o, body, p, "value")
	case "set_at", "merge_at":
		o.code = opSetAt
		if name == "merge_at" {
			o.code = opMergeAt
		}
		if !c.fields(body, p, name, []string{"target", "key", "value"}, nil) {
			return o, false
		}
		o.key = c.keyExpr(body.Get("key"), child(p, "key"))
		return c.withTargetValue(o, body, p, "value")
	case "remove_at":
		o.code = opRemoveAt
		if !c.fields(body, p, name, []string{"target", "key"}, nil) {
			return o, false
		}
		o.target, _ = c.statePath(body.Get("target"), child(p, "target"))
		o.key = c.keyExpr(body.Get("key"), child(p, "key"))
		return o, true
	case "increment_at":
		o.code = opIncrementAt
		if !c.fields(body, p, name, []string{"target", "key"}, []string{"by", "value"}) {
			return o, false
		}
		o.key = c.keyExpr(body.Get("key"), child(p, "key"))
		return c.withBy(o, body, p, name)
	case "conditional":
		return c.conditional(body, p, level, count)
	case "let":
		return c.let(body, p)
	}
	c.errorf(p, "unknown operation %q (known: %s)", name, opNames)
	return op{}, false
}

func (c *compiler) asName(body Value, ptr string) string {
	if a := body.Get("as"); a.kind != KindMissing {
		if name, ok := c.bindingName(a, child(ptr, "as")); ok {
			return name
		}
	}
	return "$item"
}

func (c *compiler) withTargetValue(o op, body Value, ptr, key string) (op, bool) {
	t, ok := c.statePath(body.Get("target"), child(ptr, "target"))
	o.target = t
	o.value = c.expr(body.Get(key), child(ptr, key), 0)
	o.optional = o.value.kind == exPath && o.value.path.optional
	if o.code == opMerge || o.code == opMergeAt {
		if lit := o.value; lit.kind == exLit && lit.lit.kind != KindObject {
			c.errorf(child(ptr, key), "the value to merge must be an object, not %s", lit.lit.kind)
		}
	}
	return o, ok
}

func (c *compiler) withBy(o op, body Value, ptr, name string) (op, bool) {
	t, ok := c.statePath(body.Get("target"), child(ptr, "target"))
	o.target = t
	by, val := body.Get("by"), body.Get("value")
	switch {
	case by.kind != KindMissing && val.kind != KindMissing:
		c.errorf(ptr, "%s takes \"by\" or its alias \"value\", not both", name)
		return o, false
	case by.kind == KindMissing && val.kind == KindMissing:
		o.value = expr{kind: exLit, lit: Number(1), ptr: ptr}
		return o, ok
	case by.kind == KindMissing:
		by = val
		ptr = child(ptr, "value")
	default:
		ptr = child(ptr, "by")
	}
	if by.kind != KindNumber && !(by.kind == KindString && looksLikePath(by.str)) {
		c.errorf(ptr, "%s takes a number or a JSONPath, not %s", name, by.kind)
		return o, false
	}
	o.value = c.expr(by, ptr, 0)
	o.optional = o.value.kind == exPath && o.value.path.optional
	return o, ok
}

func (c *compiler) keyExpr(v Value, ptr string) expr {
	if v.kind != KindString {
		c.errorf(ptr, "key takes a string or a JSONPath, not %s", v.kind)
	}
	return c.expr(v, ptr, 0)
}

func (c *compiler) conditional(v Value, ptr string, level int, count *int) (op, bool) {
	o := op{code: opIf, ptr: ptr}
	if !c.fields(v, ptr, "conditional", []string{"if", "then"}, []string{"else"}) {
		return o, false
	}
	pr := c.pred(v.Get("if"), child(ptr, "if"), 1)
	o.pred = &pr
	o.then = c.ops(v.Get("then"), child(ptr, "then"), level+1, count)
	if e := v.Get("else"); e.kind != KindMissing {
		o.els = c.ops(e, child(ptr, "else"), level+1, count)
	}
	return o, true
}

// let binds a name to the first element of a state array whose field equals
// a value, in either documented form.
func (c *compiler) let(v Value, ptr string) (op, bool) {
	o := op{code: opLet, ptr: ptr}
	if v.kind != KindObject {
		c.errorf(ptr, "let takes an object")
		return o, false
	}
	if v.n.m().find("find") >= 0 {
		if !c.fields(v, ptr, "let", []string{"name", "find"}, nil) {
			return o, false
		}
		f := v.Get("find")
		fp := child(ptr, "find")
		if !c.fields(f, fp, "find", []string{"in", "where"}, nil) {
			return o, false
		}
		w := f.Get("where")
		if w.kind != KindObject || len(w.n.m().members) != 1 {
			c.errorf(child(fp, "where"), "where takes a single {\"field\": value} pair")
			return o, false
		}
		o.key = c.source(f.Get("in"), child(fp, "in"))
		o.field = w.n.m().members[0].Key
		o.value = c.expr(w.n.m().members[0].Value, child(child(fp, "where"), o.field), 0)
	} else {
		if !c.fields(v, ptr, "let", []string{"name", "find_target", "find_field", "find_value"}, nil) {
			return o, false
		}
		o.key = c.source(v.Get("find_target"), child(ptr, "find_target"))
		if f := v.Get("find_field"); f.kind != KindString || f.str == "" {
			c.errorf(child(ptr, "find_field"), "find_field takes a field name")
		} else {
			o.field = f.str
		}
		o.value = c.expr(v.Get("find_value"), child(ptr, "find_value"), 0)
	}
	name, ok := c.bindingName(v.Get("name"), child(ptr, "name"))
	if !ok {
		return o, false
	}
	o.as = name
	c.bindings = append(c.bindings, name)
	return o, true
}
