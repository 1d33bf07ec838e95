package tick

import "fmt"

type predOp uint8

const (
	pEquals predOp = iota
	pNotEquals
	pGt
	pGte
	pLt
	pLte
	pIn
	pNotIn
	pExists
	pIncludes
	pMinItems
	pMaxItems
	pExpired
	pEvery
	pSome
	pSubsetOf
	pNot
	pAnd
	pOr
	pFields
)

var binaryPreds = map[string]predOp{
	"equals": pEquals, "eq": pEquals, "not_equals": pNotEquals,
	"gt": pGt, "gte": pGte, "lt": pLt, "lte": pLte, "in": pIn, "not_in": pNotIn,
}

// pred is a compiled predicate. The meaning of a, b and c depends on op:
// the two operands; array and value; timestamp, now and max age.
type pred struct {
	op      predOp
	a, b, c expr
	as      string
	keys    []string // pFields: the fields compared
	kids    []pred
	exprs   []expr // pFields: the values compared
	// fixed (pFields): no value reads the item binding, so the values can
	// be computed once for a whole array instead of once per item.
	fixed bool
}

// Predicate is a compiled condition.
type Predicate struct{ p pred }

// CompilePredicate compiles a predicate that may use any binding ($item,
// $prev, $context, $error, or a name chosen with "as"). The error is Errors.
func CompilePredicate(raw []byte) (*Predicate, error) {
	return compilePredicate(raw, compiler{any: true})
}

// CompilePredicateWith compiles a predicate that may use only the bindings
// opts allows, as implication and saga conditions require.
func CompilePredicateWith(raw []byte, opts TemplateOptions) (*Predicate, error) {
	return compilePredicate(raw, compiler{opts: opts})
}

func compilePredicate(raw []byte, c compiler) (*Predicate, error) {
	v, ok := c.parse(raw)
	if !ok {
		return nil, c.err()
	}
	p := c.pred(v, "", 1)
	if err := c.err(); err != nil {
		return nil, err
	}
	return &Predicate{p: p}, nil
}

// ReadsState reports whether testing the predicate may read the state, as
// Template.ReadsState.
func (p *Predicate) ReadsState() bool { return p.p.readsState() }

func (p *pred) readsState() bool {
	if p.a.readsState() || p.b.readsState() || p.c.readsState() {
		return true
	}
	for i := range p.kids {
		if p.kids[i].readsState() {
			return true
		}
	}
	for i := range p.exprs {
		if p.exprs[i].readsState() {
			return true
		}
	}
	return false
}

// Eval tests the predicate. A missing path reads as null; an error comes only
// from evaluating an operand (a concat of an object, for example).
func (p *Predicate) Eval(s *Scope) (bool, error) { return p.p.eval(s) }

var predNames = "equals, eq, not_equals, gt, gte, lt, lte, in, not_in, exists, includes, minItems, maxItems, expired, every, some, subset_of, not, and, or"

func (c *compiler) pred(v Value, ptr string, depth int) pred {
	if depth > MaxPredicateDepth {
		c.errorf(ptr, "predicates nested deeper than %d levels", MaxPredicateDepth)
		return pred{op: pAnd}
	}
	if v.kind != KindObject || len(v.n.m().members) != 1 {
		c.errorf(ptr, "a predicate is an object with exactly one key (%s)", predNames)
		return pred{op: pAnd}
	}
	m := v.n.m().members[0]
	p := child(ptr, m.Key)
	if op, ok := binaryPreds[m.Key]; ok {
		if m.Value.kind != KindArray || len(m.Value.n.m().items) != 2 {
			c.errorf(p, "%s takes an array of two values", m.Key)
			return pred{op: pAnd}
		}
		return pred{op: op, a: c.expr(m.Value.n.m().items[0], index(p, 0), 0), b: c.expr(m.Value.n.m().items[1], index(p, 1), 0)}
	}
	switch m.Key {
	case "exists":
		if m.Value.kind != KindString || !looksLikePath(m.Value.str) {
			c.errorf(p, "exists takes a JSONPath string")
			return pred{op: pAnd}
		}
		return pred{op: pExists, a: c.expr(m.Value, p, 0)}
	case "includes":
		if !c.fields(m.Value, p, "includes", []string{"array", "value"}, nil) {
			return pred{op: pAnd}
		}
		return pred{op: pIncludes, a: c.expr(m.Value.Get("array"), child(p, "array"), 0), b: c.expr(m.Value.Get("value"), child(p, "value"), 0)}
	case "minItems", "maxItems":
		bound, op := "min", pMinItems
		if m.Key == "maxItems" {
			bound, op = "max", pMaxItems
		}
		if !c.fields(m.Value, p, m.Key, []string{"array", bound}, nil) {
			return pred{op: pAnd}
		}
		return pred{op: op, a: c.expr(m.Value.Get("array"), child(p, "array"), 0), b: c.count(m.Value.Get(bound), child(p, bound))}
	case "expired":
		if !c.fields(m.Value, p, "expired", []string{"timestamp", "maxAgeSeconds", "now"}, nil) {
			return pred{op: pAnd}
		}
		return pred{op: pExpired,
			a: c.expr(m.Value.Get("timestamp"), child(p, "timestamp"), 0),
			b: c.expr(m.Value.Get("now"), child(p, "now"), 0),
			c: c.expr(m.Value.Get("maxAgeSeconds"), child(p, "maxAgeSeconds"), 0)}
	case "every", "some":
		if !c.fields(m.Value, p, m.Key, []string{"in", "match"}, []string{"as"}) {
			return pred{op: pAnd}
		}
		op := pEvery
		if m.Key == "some" {
			op = pSome
		}
		out := pred{op: op, a: c.source(m.Value.Get("in"), child(p, "in")), as: "$item"}
		kids, as := c.itemPred(m.Value, p, "match", depth)
		out.kids, out.as = kids, as
		return out
	case "subset_of":
		if !c.fields(m.Value, p, "subset_of", []string{"items", "array"}, nil) {
			return pred{op: pAnd}
		}
		return pred{op: pSubsetOf, a: c.expr(m.Value.Get("items"), child(p, "items"), 0), b: c.expr(m.Value.Get("array"), child(p, "array"), 0)}
	case "not":
		return pred{op: pNot, kids: []pred{c.pred(m.Value, p, depth+1)}}
	case "and", "or":
		op := pAnd
		if m.Key == "or" {
			op = pOr
		}
		if m.Value.kind != KindArray || len(m.Value.n.m().items) == 0 {
			c.errorf(p, "%s takes a non-empty array of predicates", m.Key)
			return pred{op: pAnd}
		}
		out := pred{op: op, kids: make([]pred, len(m.Value.n.m().items))}
		for i, it := range m.Value.n.m().items {
			out.kids[i] = c.pred(it, index(p, i), depth+1)
		}
		return out
	}
	c.errorf(p, "unknown predicate %q (known: %s)", m.Key, predNames)
	return pred{op: pAnd}
}

// count compiles a non-negative integer bound, literal or path.
func (c *compiler) count(v Value, ptr string) expr {
	if v.kind == KindNumber && (v.num < 0 || v.num != float64(int64(v.num))) {
		c.errorf(ptr, "must be a non-negative integer")
	} else if v.kind != KindNumber && !(v.kind == KindString && looksLikePath(v.str)) {
		c.errorf(ptr, "must be a non-negative integer or a JSONPath")
	}
	return c.expr(v, ptr, 0)
}

// itemPred compiles the predicate under key of obj with the item binding
// ("as", default "$item") in scope; it returns it as a one-element slice.
func (c *compiler) itemPred(obj Value, ptr, key string, depth int) ([]pred, string) {
	as := "$item"
	if a := obj.Get("as"); a.kind != KindMissing {
		if name, ok := c.bindingName(a, child(ptr, "as")); ok {
			as = name
		}
	}
	n := len(c.bindings)
	c.bindings = append(c.bindings, as)
	var out []pred
	m := obj.Get(key)
	if fieldMatch(m) {
		out = []pred{c.fieldPred(m, child(ptr, key), as, false)}
	} else {
		out = []pred{c.pred(m, child(ptr, key), depth+1)}
	}
	c.bindings = c.bindings[:n]
	return out, as
}

// fieldMatch tells the shorthand {"field": value} from a predicate.
func fieldMatch(v Value) bool {
	if v.kind != KindObject || len(v.n.m().members) == 0 {
		return false
	}
	for _, m := range v.n.m().members {
		if _, ok := binaryPreds[m.Key]; ok {
			return false
		}
		switch m.Key {
		case "exists", "includes", "minItems", "maxItems", "expired", "every", "some", "subset_of", "not", "and", "or":
			return false
		}
	}
	return true
}

// fieldPred compiles {"field": value, ...}: every field of the item equals
// its value. single demands exactly one field.
func (c *compiler) fieldPred(v Value, ptr, as string, single bool) pred {
	if v.kind != KindObject || len(v.n.m().members) == 0 || (single && len(v.n.m().members) != 1) {
		c.errorf(ptr, "takes a single {\"field\": value} pair")
		return pred{op: pAnd}
	}
	out := pred{op: pFields, as: as, fixed: true}
	for _, m := range v.n.m().members {
		out.keys = append(out.keys, m.Key)
		e := c.expr(m.Value, child(ptr, m.Key), 0)
		if e.kind != exLit && (e.kind != exPath || e.path.root != rootEvent || e.path.field == evState) {
			out.fixed = false
		}
		out.exprs = append(out.exprs, e)
	}
	return out
}

func (p *pred) eval(s *Scope) (bool, error) {
	switch p.op {
	case pEquals, pNotEquals, pGt, pGte, pLt, pLte, pIn, pNotIn:
		a, err := p.a.operand(s)
		if err != nil {
			return false, err
		}
		b, err := p.b.operand(s)
		if err != nil {
			return false, err
		}
		switch p.op {
		case pEquals:
			return Equal(a, b), nil
		case pNotEquals:
			return !Equal(a, b), nil
		case pIn:
			return contains(b, a), nil
		case pNotIn:
			return !contains(b, a), nil
		}
		return compare(p.op, a, b), nil
	case pExists:
		return p.a.path.Resolve(s).kind != KindMissing, nil
	case pIncludes:
		arr, val, err := p.pair(s)
		return err == nil && contains(arr, val), err
	case pMinItems, pMaxItems:
		arr, bound, err := p.pair(s)
		if err != nil || bound.kind != KindNumber || (arr.kind != KindArray && arr.kind != KindNull) {
			return false, err
		}
		if p.op == pMinItems {
			return float64(arr.Len()) >= bound.num, nil
		}
		return float64(arr.Len()) <= bound.num, nil
	case pExpired:
		ts, now, err := p.pair(s)
		if err != nil {
			return false, err
		}
		age, err := p.c.operand(s)
		if err != nil || ts.kind != KindNumber || now.kind != KindNumber || age.kind != KindNumber {
			return false, err
		}
		return now.num-ts.num > age.num, nil
	case pEvery, pSome:
		arr, err := p.a.operand(s)
		if err != nil {
			return false, err
		}
		if arr.kind != KindArray {
			return p.op == pEvery && arr.kind == KindNull, nil
		}
		n := len(s.Bindings)
		s.Bindings = append(s.Bindings, Binding{Name: p.as})
		result := p.op == pEvery
		for _, it := range arr.n.m().items {
			s.Bindings[n].Value = it
			ok, err := p.kids[0].eval(s)
			if err != nil || ok != result {
				s.Bindings = s.Bindings[:n]
				return ok, err
			}
		}
		s.Bindings = s.Bindings[:n]
		return result, nil
	case pSubsetOf:
		items, arr, err := p.pair(s)
		if err != nil || (items.kind != KindArray && items.kind != KindNull) {
			return false, err
		}
		for _, it := range items.Items() {
			if !contains(arr, it) {
				return false, nil
			}
		}
		return true, nil
	case pNot:
		ok, err := p.kids[0].eval(s)
		return !ok, err
	case pAnd, pOr:
		for i := range p.kids {
			ok, err := p.kids[i].eval(s)
			if err != nil {
				return false, err
			}
			if ok == (p.op == pOr) {
				return ok, nil
			}
		}
		return p.op == pAnd, nil
	case pFields:
		item := s.lookup(p.as)
		for i := range p.keys {
			want, err := p.exprs[i].operand(s)
			if err != nil {
				return false, err
			}
			if !fieldEquals(&item, p.keys[i], &want) {
				return false, nil
			}
		}
		return true, nil
	}
	return false, fmt.Errorf("BUG: tick: unknown predicate %d", p.op)
}

// fieldEquals compares a field of item with want; a missing field is null.
// Both are passed where they lie: this is the inner loop of upsert and
// remove where, and copying Values in and out was much of its cost.
func fieldEquals(item *Value, key string, want *Value) bool {
	if item.kind != KindObject {
		return want.kind == KindNull
	}
	n := item.n
	if n.lz != nil {
		if want.kind == KindString && n.lz.full.Load() == nil {
			// An item still text (event data kept in state), matched on
			// a string, the usual id: compare the text, building nothing.
			if t, esc := rawMember(n.lz.raw, key, n.gen == uniqueKeys); !esc {
				return len(t) == len(want.str)+2 && t[0] == '"' && t[1:len(t)-1] == want.str
			}
		}
		got := item.Get(key)
		if got.kind == KindMissing {
			got = Null()
		}
		return Equal(got, *want)
	}
	// member, written out.
	ms := n.members
	for i := range ms {
		if sameString(ms[i].Key, key) {
			got := &ms[i].Value
			if got.kind == KindString && want.kind == KindString {
				return sameString(got.str, want.str)
			}
			return equal(*got, *want)
		}
	}
	return want.kind == KindNull
}

// fixedFields evaluates the values of a fixed pFields predicate once, for
// matching many items with matchFields. ok is false when p is not such a
// predicate or has more fields than fit.
func (p *pred) fixedFields(s *Scope, buf *[4]Value) (want []Value, ok bool, err error) {
	if p.op != pFields || !p.fixed || len(p.keys) > len(buf) {
		return nil, false, nil
	}
	want = buf[:len(p.keys)]
	for i := range p.keys {
		if want[i], err = p.exprs[i].operand(s); err != nil {
			return nil, false, err
		}
	}
	return want, true, nil
}

// matchFields applies a fixed pFields predicate whose values are want.
func (p *pred) matchFields(item *Value, want []Value) bool {
	for i := range p.keys {
		if !fieldEquals(item, p.keys[i], &want[i]) {
			return false
		}
	}
	return true
}

func (p *pred) pair(s *Scope) (Value, Value, error) {
	a, err := p.a.operand(s)
	if err != nil {
		return a, a, err
	}
	b, err := p.b.operand(s)
	return a, b, err
}

func contains(arr, v Value) bool {
	for _, it := range arr.Items() {
		if Equal(it, v) {
			return true
		}
	}
	return false
}

// compare orders two numbers or two strings; other pairs are never ordered.
func compare(op predOp, a, b Value) bool {
	var c int
	switch {
	case a.kind == KindNumber && b.kind == KindNumber:
		switch {
		case a.num < b.num:
			c = -1
		case a.num > b.num:
			c = 1
		}
	case a.kind == KindString && b.kind == KindString:
		switch {
		case a.str < b.str:
			c = -1
		case a.str > b.str:
			c = 1
		}
	default:
		return false
	}
	switch op {
	case pGt:
		return c > 0
	case pGte:
		return c >= 0
	case pLt:
		return c < 0
	}
	return c <= 0
}
