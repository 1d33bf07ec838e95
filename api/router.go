package api

import (
	"sort"
	"strings"
)

// router is a route table: patterns of static segments, ":name" segments matching one segment,
// and a final "*name" segment matching the rest of the path (at least one segment).
type router struct {
	root node
}

type node struct {
	static   map[string]*node
	param    *node
	paramKey string
	rest     map[string]Handler // method -> handler of a trailing "*name"
	restKey  string
	handlers map[string]Handler // method -> handler of a pattern ending here
}

// Handler serves one routed request. A returned error becomes the error envelope.
type Handler func(r *Request) error

type param struct{ key, value string }

func splitPath(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// add registers h for method and pattern. Conflicting registrations are programmer errors.
func (rt *router) add(method, pattern string, h Handler) {
	n := &rt.root
	segs := splitPath(pattern)
	for i, seg := range segs {
		switch {
		case strings.HasPrefix(seg, "*"):
			if i != len(segs)-1 {
				panic("BUG: route " + pattern + ": *rest must be the last segment")
			}
			if n.rest == nil {
				n.rest, n.restKey = map[string]Handler{}, seg[1:]
			}
			if n.restKey != seg[1:] || n.rest[method] != nil {
				panic("BUG: route " + method + " " + pattern + " conflicts with an earlier route")
			}
			n.rest[method] = h
			return
		case strings.HasPrefix(seg, ":"):
			if n.param == nil {
				n.param, n.paramKey = &node{}, seg[1:]
			}
			if n.paramKey != seg[1:] {
				panic("BUG: route " + pattern + ": parameter :" + seg[1:] + " conflicts with :" + n.paramKey)
			}
			n = n.param
		default:
			if n.static == nil {
				n.static = map[string]*node{}
			}
			next := n.static[seg]
			if next == nil {
				next = &node{}
				n.static[seg] = next
			}
			n = next
		}
	}
	if n.handlers == nil {
		n.handlers = map[string]Handler{}
	}
	if n.handlers[method] != nil {
		panic("BUG: route " + method + " " + pattern + " registered twice")
	}
	n.handlers[method] = h
}

// match finds the handler of method and path and binds its parameters, appending them to params
// (whose spare capacity spares the allocation). When a path matches patterns but none for method,
// it returns the methods of the first such pattern (for a 405). Static segments are tried before
// parameters, and parameters before a rest, at each segment. A path with an empty segment matches
// nothing.
func (rt *router) match(method, path string, params []param) (Handler, []param, map[string]Handler) {
	path = strings.TrimPrefix(path, "/")
	if strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || strings.Contains(path, "//") {
		return nil, nil, nil
	}
	m := matcher{method: method}
	h, params := m.walk(&rt.root, path, params)
	return h, params, m.other
}

type matcher struct {
	method string
	other  map[string]Handler // the first method table that matched the path without method
}

func (m *matcher) table(hs map[string]Handler) Handler {
	if hs == nil {
		return nil
	}
	if h := hs[m.method]; h != nil {
		return h
	}
	if m.other == nil {
		m.other = hs
	}
	return nil
}

// walk matches rest, the segments of the path below n joined by "/" ("" when none is left).
func (m *matcher) walk(n *node, rest string, params []param) (Handler, []param) {
	if rest == "" {
		return m.table(n.handlers), params
	}
	seg, tail, _ := strings.Cut(rest, "/")
	if next := n.static[seg]; next != nil {
		if h, p := m.walk(next, tail, params); h != nil {
			return h, p
		}
	}
	if n.param != nil {
		if h, p := m.walk(n.param, tail, append(params, param{n.paramKey, seg})); h != nil {
			return h, p
		}
	}
	if n.rest != nil {
		if h := m.table(n.rest); h != nil {
			return h, append(params, param{n.restKey, rest})
		}
	}
	return nil, nil
}

// allowed lists the methods of a method table, for the Allow header of a 405.
func allowed(hs map[string]Handler) string {
	ms := make([]string, 0, len(hs))
	for m := range hs {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	return strings.Join(ms, ", ")
}
