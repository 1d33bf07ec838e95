package tick

import (
	"errors"
	"fmt"
	"strings"
)

// Nesting limits of value expressions.
const (
	// MaxMergeDepth bounds nested "$merge" in handler values.
	MaxMergeDepth = 16
	// MaxTemplateDepth bounds nested concat, coalesce and merge in templates.
	MaxTemplateDepth = 32
	// MaxPredicateDepth bounds nested predicates.
	MaxPredicateDepth = 32
)

type exprKind uint8

const (
	exLit exprKind = iota
	exPath
	exObject
	exArray
	exMerge
	exConcat
	exCoalesce
)

// expr is a compiled value expression: a literal, a path, an object or array
// whose members are expressions, or an operator ($merge in handlers; concat,
// coalesce and merge in templates). Literal subtrees are folded into one
// frozen Value at compile time.
type expr struct {
	kind exprKind
	lit  Value
	path *Path
	keys []string
	kids []expr
	ptr  string
	// nullOmits: in templates an optional path that resolves to null is
	// left out, as if missing.
	nullOmits bool
}

func notFound(ptr string, p *Path) error {
	return &Error{Pointer: ptr, Message: fmt.Sprintf("path %s not found (append \"?\" to make it optional)", p.src), Err: ErrNotFound}
}

// readsState reports whether the expression holds a path that reads the state.
func (e *expr) readsState() bool {
	if e.path != nil && e.path.IsState() {
		return true
	}
	for i := range e.kids {
		if e.kids[i].readsState() {
			return true
		}
	}
	return false
}

// eval computes the expression. A missing result without error means an
// optional path found nothing: the caller omits the key, element or operation.
func (e *expr) eval(s *Scope) (Value, error) {
	// The common kinds are kept apart from the rest, whose locals would
	// give every evaluation a large frame to set up.
	switch e.kind {
	case exLit:
		return e.lit, nil
	case exPath:
		v := e.path.Resolve(s)
		if v.kind == KindMissing || (e.nullOmits && v.kind == KindNull && e.path.optional) {
			return Value{}, e.missing()
		}
		return v, nil
	case exMerge:
		return e.merge(s), nil
	}
	return e.evalBuilt(s)
}

// appendJSON is eval followed by Value.AppendJSON, without building the objects and arrays the
// expression spells out: their members are evaluated in the same order and dropped when
// missing, as evalBuilt does.
func (e *expr) appendJSON(dst []byte, s *Scope) ([]byte, Kind, error) {
	var open, sep, end byte
	switch e.kind {
	case exObject:
		open, end = '{', '}'
	case exArray:
		open, end = '[', ']'
	default:
		v, err := e.eval(s)
		if err != nil || v.kind == KindMissing {
			return dst, v.kind, err
		}
		return v.AppendJSON(dst), v.kind, nil
	}
	dst = append(dst, open)
	for i := range e.kids {
		mark := len(dst)
		if sep != 0 {
			dst = append(dst, sep)
		}
		if e.kind == exObject {
			dst = append(appendString(dst, e.keys[i]), ':')
		}
		var kind Kind
		var err error
		if dst, kind, err = e.kids[i].appendJSON(dst, s); err != nil {
			return dst, KindMissing, err
		}
		if kind == KindMissing {
			dst = dst[:mark]
			continue
		}
		sep = ','
	}
	if e.kind == exObject {
		return append(dst, end), KindObject, nil
	}
	return append(dst, end), KindArray, nil
}

// missing is the outcome of a path that found nothing: no error when the
// path is optional.
func (e *expr) missing() error {
	if e.path.optional {
		return nil
	}
	return notFound(e.ptr, e.path)
}

// evalBuilt is eval of the kinds that build a value.
func (e *expr) evalBuilt(s *Scope) (Value, error) {
	switch e.kind {
	case exObject:
		out := allocObject(0, len(e.kids))
		for i := range e.kids {
			v, err := e.kids[i].eval(s)
			if err != nil {
				return Value{}, err
			}
			if v.kind != KindMissing {
				out.n.members = append(out.n.members, Member{Key: e.keys[i], Value: v})
			}
		}
		return out, nil
	case exArray:
		out := Value{kind: KindArray, n: &node{items: make([]Value, 0, len(e.kids))}}
		for i := range e.kids {
			v, err := e.kids[i].eval(s)
			if err != nil {
				return Value{}, err
			}
			if v.kind != KindMissing {
				out.n.items = append(out.n.items, v)
			}
		}
		return out, nil
	case exConcat:
		var b strings.Builder
		for i := range e.kids {
			v, err := e.kids[i].eval(s)
			if err != nil {
				return Value{}, err
			}
			switch v.kind {
			case KindMissing, KindNull:
			case KindString:
				b.WriteString(v.str)
			case KindNumber, KindBool:
				b.Write(v.AppendJSON(nil))
			default:
				return Value{}, &Error{Pointer: e.kids[i].ptr, Message: fmt.Sprintf("concat takes strings, numbers and booleans, not %s", v.kind), Err: ErrType}
			}
		}
		return String(b.String()), nil
	case exCoalesce:
		for i := range e.kids {
			v, err := e.kids[i].eval(s)
			if err == nil && v.kind != KindMissing && v.kind != KindNull {
				return v, nil
			}
			if err != nil && !errors.Is(err, ErrNotFound) {
				return Value{}, err
			}
		}
		return Null(), nil
	}
	return Value{}, fmt.Errorf("BUG: tick: unknown expression kind %d", e.kind)
}

// merge evaluates $merge (and the template merge) left to right. Elements
// that cannot be resolved, and non-objects, are skipped by design. Literal
// object elements are merged member by member, without building them, and
// the result is allocated once at its final size.
func (e *expr) merge(s *Scope) Value {
	var buf [4]Value
	parts := buf[:0]
	size := 0
	for i := range e.kids {
		k := &e.kids[i]
		var v Value
		if k.kind == exObject {
			size += len(k.kids)
		} else if pv, err := k.eval(s); err == nil && pv.kind == KindObject {
			v = pv
			size += len(v.n.m().members)
		}
		parts = append(parts, v)
	}
	out := allocObject(0, size)
	n := out.n
	for i := range e.kids {
		k := &e.kids[i]
		switch {
		case k.kind != exObject:
			if parts[i].kind != KindObject {
				continue
			}
			ms := parts[i].n.m().members
			if len(n.members) == 0 {
				// The keys of one object are distinct: nothing to look up.
				n.members = append(n.members, ms...)
				continue
			}
			for _, m := range ms {
				n.put(m.Key, m.Value)
			}
		case len(k.kids) == 1:
			// One member: there is nothing to undo if it fails.
			if v, err := k.kids[0].eval(s); err == nil && v.kind != KindMissing {
				n.put(k.keys[0], v)
			}
		default:
			k.mergeLiteral(s, n)
		}
	}
	return out
}

// mergeLiteral puts the members of the literal object k into n, or none of
// them if one fails to evaluate.
func (k *expr) mergeLiteral(s *Scope, n *node) {
	var buf [8]Member
	members := buf[:0]
	for j := range k.kids {
		v, err := k.kids[j].eval(s)
		if err != nil {
			return
		}
		if v.kind != KindMissing {
			members = append(members, Member{Key: k.keys[j], Value: v})
		}
	}
	for _, m := range members {
		n.put(m.Key, m.Value)
	}
}

// operand evaluates a predicate argument: a missing path reads as null, so
// predicates never fail on absent data.
func (e *expr) operand(s *Scope) (Value, error) {
	switch e.kind {
	case exLit:
		return e.lit, nil
	case exPath:
		if v := e.path.Resolve(s); v.kind != KindMissing {
			return v, nil
		}
		return Null(), nil
	}
	v, err := e.eval(s)
	if v.kind == KindMissing {
		v = Null()
	}
	return v, err
}
