package tick

import (
	"fmt"
	"slices"
	"strings"
)

// TemplateOptions says which bindings a template or predicate may use.
type TemplateOptions struct {
	Prev     bool // "$prev" (saga steps)
	Context  bool // "$context.<step>" (saga steps)
	Error    bool // "$error" (saga on_failed)
	Item     bool // "$item" (implication map)
	Wildcard bool // "[*]" (projection source id paths only)
	// Bindings names further bindings in scope, e.g. a map's "as": "$entry".
	Bindings []string
}

// compiler collects every problem of one document with its JSON Pointer.
type compiler struct {
	errs     Errors
	opts     TemplateOptions
	any      bool     // every binding name is accepted
	bindings []string // bindings declared so far (handlers)
	template bool     // template operators and "?" omitting null
	before   bool     // some path reads "$.state"
}

func (c *compiler) errorf(ptr, format string, args ...any) {
	c.errs = append(c.errs, &Error{Pointer: ptr, Message: fmt.Sprintf(format, args...), Err: ErrInvalid})
}

func (c *compiler) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return c.errs
}

func child(ptr, token string) string { return ptr + "/" + pointerToken(token) }

func index(ptr string, i int) string { return fmt.Sprintf("%s/%d", ptr, i) }

// parse reads a document for compilation, reporting bad JSON as one Error.
func (c *compiler) parse(raw []byte) (Value, bool) {
	v, err := ParseJSON(raw)
	if err != nil {
		c.errs = append(c.errs, &Error{Message: err.Error(), Err: ErrJSON})
		return Value{}, false
	}
	return v, true
}

// path compiles a path string and checks its bindings are in scope.
func (c *compiler) path(s, ptr string) (*Path, bool) {
	p, msg := parsePath(s, c.opts.Wildcard)
	if msg != "" {
		c.errorf(ptr, "%s", msg)
		return nil, false
	}
	if p.root == rootEvent && p.field == evState {
		c.before = true
	}
	switch p.root {
	case rootPrev:
		if !c.opts.Prev && !c.any {
			c.errorf(ptr, "$prev is only available in saga steps")
			return nil, false
		}
	case rootContext:
		if !c.opts.Context && !c.any {
			c.errorf(ptr, "$context is only available in saga steps")
			return nil, false
		}
	case rootError:
		if !c.opts.Error && !c.any {
			c.errorf(ptr, "$error is only available in a saga's on_failed")
			return nil, false
		}
	case rootBinding:
		if !c.any && !c.known(p.name) {
			c.errorf(ptr, "unknown binding %s in %q", p.name, s)
			return nil, false
		}
	}
	return &p, true
}

func (c *compiler) known(name string) bool {
	if name == "$item" && c.opts.Item {
		return true
	}
	return slices.Contains(c.bindings, name) || slices.Contains(c.opts.Bindings, name)
}

// expr compiles a value expression. depth counts enclosing operators.
func (c *compiler) expr(v Value, ptr string, depth int) expr {
	switch v.kind {
	case KindString:
		if !looksLikePath(v.str) {
			return expr{kind: exLit, lit: v, ptr: ptr}
		}
		p, ok := c.path(v.str, ptr)
		if !ok {
			return expr{kind: exLit, lit: Null(), ptr: ptr}
		}
		return expr{kind: exPath, path: p, ptr: ptr, nullOmits: c.template}
	case KindArray:
		e := expr{kind: exArray, ptr: ptr, kids: make([]expr, len(v.n.m().items))}
		for i, it := range v.n.m().items {
			e.kids[i] = c.expr(it, index(ptr, i), depth)
		}
		return fold(e, v)
	case KindObject:
		if len(v.n.m().members) == 1 {
			if e, ok := c.operator(v.n.m().members[0], ptr, depth); ok {
				return e
			}
		}
		e := expr{kind: exObject, ptr: ptr, kids: make([]expr, len(v.n.m().members)), keys: make([]string, len(v.n.m().members))}
		for i, m := range v.n.m().members {
			e.keys[i] = m.Key
			e.kids[i] = c.expr(m.Value, child(ptr, m.Key), depth)
		}
		return fold(e, v)
	}
	return expr{kind: exLit, lit: v, ptr: ptr}
}

// operator compiles a single-member object that names an operator.
func (c *compiler) operator(m Member, ptr string, depth int) (expr, bool) {
	var kind exprKind
	limit := MaxTemplateDepth
	switch {
	case m.Key == "$":
		p := child(ptr, "$")
		if m.Value.kind != KindString || !looksLikePath(m.Value.str) {
			c.errorf(p, "{\"$\": ...} takes a JSONPath string")
			return expr{kind: exLit, lit: Null(), ptr: ptr}, true
		}
		return c.expr(m.Value, p, depth), true
	case m.Key == "$merge":
		kind, limit = exMerge, MaxMergeDepth
	case c.template && m.Key == "merge":
		kind = exMerge
	case c.template && m.Key == "concat":
		kind = exConcat
	case c.template && m.Key == "coalesce":
		kind = exCoalesce
	default:
		return expr{}, false
	}
	p := child(ptr, m.Key)
	if depth+1 > limit {
		c.errorf(p, "%s nested deeper than %d levels", m.Key, limit)
		return expr{kind: exLit, lit: Null(), ptr: ptr}, true
	}
	if m.Value.kind != KindArray {
		c.errorf(p, "%s takes an array", m.Key)
		return expr{kind: exLit, lit: Null(), ptr: ptr}, true
	}
	e := expr{kind: kind, ptr: p, kids: make([]expr, len(m.Value.n.m().items))}
	for i, it := range m.Value.n.m().items {
		e.kids[i] = c.expr(it, index(p, i), depth+1)
	}
	return e, true
}

// fold turns an object or array of literals back into the literal it was.
func fold(e expr, v Value) expr {
	for i := range e.kids {
		if e.kids[i].kind != exLit {
			return e
		}
	}
	return expr{kind: exLit, lit: v, ptr: e.ptr}
}

// statePath compiles a handler target: "" is the root, otherwise field
// names separated by dots.
func (c *compiler) statePath(v Value, ptr string) ([]string, bool) {
	if v.kind != KindString {
		c.errorf(ptr, "target must be a string state path, not %s", v.kind)
		return nil, false
	}
	s := v.str
	if s == "" {
		return nil, true
	}
	if s[0] == '$' || s[0] == '@' {
		c.errorf(ptr, "target %q is a state path without a $ or @ prefix, e.g. \"profile.name\"", s)
		return nil, false
	}
	segs := strings.Split(s, ".")
	for _, sg := range segs {
		if sg == "" {
			c.errorf(ptr, "target %q has an empty segment", s)
			return nil, false
		}
		if strings.ContainsAny(sg, "[]?* ") {
			c.errorf(ptr, "target %q: segment %q may not contain [ ] ? * or spaces", s, sg)
			return nil, false
		}
	}
	return segs, true
}

// source compiles an "in" field: a state path without prefix, or a JSONPath.
func (c *compiler) source(v Value, ptr string) expr {
	if v.kind == KindString && !looksLikePath(v.str) {
		segs, ok := c.statePath(v, ptr)
		if !ok {
			return expr{kind: exLit, lit: Null(), ptr: ptr}
		}
		p := &Path{src: v.str, root: rootState, optional: true}
		for _, s := range segs {
			p.segs = append(p.segs, segment{kind: segField, name: s})
		}
		return expr{kind: exPath, path: p, ptr: ptr}
	}
	if v.kind != KindString {
		c.errorf(ptr, "must be a state path or a JSONPath string")
		return expr{kind: exLit, lit: Null(), ptr: ptr}
	}
	return c.expr(v, ptr, 0)
}

// bindingName checks a name given by "as" or let.
func (c *compiler) bindingName(v Value, ptr string) (string, bool) {
	s := v.Str()
	if v.kind != KindString || len(s) < 2 || s[0] != '$' || !isIdentStart(s[1]) {
		c.errorf(ptr, "binding name must be a string like \"$item\"")
		return "", false
	}
	for i := 2; i < len(s); i++ {
		if !isIdent(s[i]) {
			c.errorf(ptr, "binding name %q may hold only letters, digits and _", s)
			return "", false
		}
	}
	switch s {
	case "$prev", "$context", "$error", "$entries":
		c.errorf(ptr, "binding name %s is reserved", s)
		return "", false
	}
	return s, true
}

// fields checks that an object has the required keys and no unknown ones.
func (c *compiler) fields(v Value, ptr, what string, required, optional []string) bool {
	if v.kind != KindObject {
		c.errorf(ptr, "%s takes an object, not %s", what, v.kind)
		return false
	}
	ok := true
	for _, r := range required {
		if v.n.m().find(r) < 0 {
			c.errorf(ptr, "%s requires %q", what, r)
			ok = false
		}
	}
	for _, m := range v.n.m().members {
		if !slices.Contains(required, m.Key) && !slices.Contains(optional, m.Key) {
			c.errorf(child(ptr, m.Key), "unknown field %q in %s", m.Key, what)
			ok = false
		}
	}
	return ok
}
