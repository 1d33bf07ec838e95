package spec

import (
	"strings"

	"github.com/j17-go/j17/tick"
)

var (
	projectionKeys = []string{"name", "for_each", "sources", "include", "select"}
	sourceKeys     = []string{"type", "id", "mode"}
	mapSelectKeys  = []string{"$map", "as", "to"}
	lookupKeys     = []string{"$lookup", "where", "select"}
)

// Limits of the Projections guide.
const MaxProjectionSources = 10

func (l *loader) projections(n *node, ptr string) {
	if !l.want(n, ptr, kindObject, "projections") {
		return
	}
	for _, m := range n.members {
		p := join(ptr, m.key)
		if !isProjectionName(m.key) {
			l.errorf(p, m.keyAt, "projection name %q must be lowercase letters, digits and '_', starting with a letter", m.key)
			continue
		}
		if pr := l.projection(m.key, m.val, p); pr != nil {
			l.s.projections[m.key] = pr
		}
	}
}

func isProjectionName(s string) bool {
	if s == "" || len(s) > maxNameLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func (l *loader) projection(name string, n *node, ptr string) *Projection {
	what := "projection " + quote(name)
	errs := l.r.count()
	if !l.object(n, ptr, what, projectionKeys...) {
		return nil
	}
	pr := &Projection{Name: name}
	if v := n.get("name"); v != nil {
		if s, ok := l.str(v, join(ptr, "name"), "name"); ok && s != name {
			l.errorf(join(ptr, "name"), v.start, "name %q differs from the projection's key %q; remove \"name\" or make them equal", s, name)
		}
	}
	if v := l.required(n, ptr, "for_each", what); v != nil {
		pr.ForEach = l.aggregateRef(v, join(ptr, "for_each"), "for_each")
	}
	var bindings []string
	if v := l.required(n, ptr, "sources", what); v != nil {
		pr.Sources = l.sources(v, join(ptr, "sources"))
		for _, s := range pr.Sources {
			bindings = append(bindings, s.Name)
		}
	}
	if v := n.get("include"); v != nil {
		pr.Include = l.include(v, join(ptr, "include"), bindings)
		for _, in := range pr.Include {
			bindings = append(bindings, in.Name)
		}
	}
	if v := l.required(n, ptr, "select", what); v != nil {
		sp := join(ptr, "select")
		if l.want(v, sp, kindObject, "select") {
			l.selectValue(v, sp, bindings, nil)
			pr.Select = l.raw(v)
		}
	}
	if l.r.count() > errs {
		return nil
	}
	return pr
}

func (l *loader) aggregateRef(n *node, ptr, what string) string {
	s, ok := l.nonEmptyString(n, ptr, what)
	if !ok {
		return ""
	}
	if _, known := l.names[s]; !known {
		l.errorf(ptr, n.start, "aggregate type %q is not defined in aggregate_types; add it or fix the name", s)
		return ""
	}
	return s
}

func (l *loader) sources(n *node, ptr string) []ProjectionSource {
	if n.kind != kindObject {
		l.errorf(ptr, n.start, "sources must be an object of named sources, such as {\"order\": \"$key\", \"customer\": {\"type\": \"customer\", \"id\": \"$.order.customer_id\"}}, not %s", n.kind)
		return nil
	}
	switch {
	case len(n.members) == 0:
		l.errorf(ptr, n.start, "sources must name at least one source, such as {\"order\": \"$key\"}")
		return nil
	case len(n.members) > MaxProjectionSources:
		l.errorf(ptr, n.start, "a projection has at most %d sources, this one has %d", MaxProjectionSources, len(n.members))
		return nil
	}
	var out []ProjectionSource
	var earlier []string
	for _, m := range n.members {
		p := join(ptr, m.key)
		src := ProjectionSource{Name: m.key}
		if !validBinding(m.key) {
			l.errorf(p, m.keyAt, "source name %q may use only letters, digits and '_'", m.key)
		}
		switch {
		case m.val.kind == kindString:
			if m.val.str != "$key" {
				l.errorf(p, m.val.start, "a source given as a string must be \"$key\" (the trigger aggregate); otherwise use {\"type\": ..., \"id\": ...}")
			}
			src.ID, src.IsKey = "$key", true
		case l.object(m.val, p, "a projection source", sourceKeys...):
			if v := l.required(m.val, p, "type", "a projection source"); v != nil {
				src.Type = l.aggregateRef(v, join(p, "type"), "type")
			}
			if v := m.val.get("mode"); v != nil {
				mp := join(p, "mode")
				if s, ok := l.str(v, mp, "mode"); ok {
					switch s {
					case "single":
					case "array":
						src.Array = true
					default:
						l.errorf(mp, v.start, "mode must be \"single\" or \"array\", not %q", s)
					}
				}
			}
			if v := l.required(m.val, p, "id", "a projection source"); v != nil {
				l.sourceID(&src, v, join(p, "id"), earlier)
			}
		}
		earlier = append(earlier, m.key)
		out = append(out, src)
	}
	return out
}

// sourceID checks a source id: "$key", a literal, or a path into an earlier source. This is
// the one place where the [*] wildcard is allowed, and it needs array mode.
func (l *loader) sourceID(src *ProjectionSource, n *node, ptr string, earlier []string) {
	s, ok := l.nonEmptyString(n, ptr, "id")
	if !ok {
		return
	}
	src.ID = s
	switch {
	case s == "$key":
		src.IsKey = true
		return
	case !strings.HasPrefix(s, "$"):
		return
	}
	path, err := tick.ParseSourcePath(s)
	if err != nil {
		l.tickErrors(err, n, ptr, "id")
		return
	}
	src.Path = path
	l.bindingRoot(s, n, ptr, earlier, "an earlier source")
	if strings.Contains(s, "[*]") && !src.Array {
		l.errorf(ptr, n.start, "id %q uses [*] and yields several ids; add \"mode\": \"array\"", s)
	}
}

// bindingRoot checks that a "$.name..." path starts at a declared binding.
func (l *loader) bindingRoot(s string, n *node, ptr string, bindings []string, what string) {
	if !strings.HasPrefix(s, "$.") {
		return
	}
	root := s[2:]
	if i := strings.IndexAny(root, ".[?"); i >= 0 {
		root = root[:i]
	}
	if !contains(bindings, root) {
		l.errorf(ptr, n.start, "path %q starts at %q, which is not %s (known: %s)", s, root, what, quoteList(bindings))
	}
}

func validBinding(s string) bool {
	return s != "" && isSlug(s)
}

func (l *loader) include(n *node, ptr string, taken []string) []ProjectionInclude {
	if !l.want(n, ptr, kindObject, "include") {
		return nil
	}
	var out []ProjectionInclude
	for _, m := range n.members {
		p := join(ptr, m.key)
		if contains(taken, m.key) {
			l.errorf(p, m.keyAt, "include name %q is already a source; rename one of them", m.key)
			continue
		}
		s, ok := l.str(m.val, p, "an include")
		if !ok {
			continue
		}
		typ, id, found := strings.Cut(s, ":")
		if !found || id != "global" {
			l.errorf(p, m.val.start, "include %q must have the form \"type:global\" (include is restricted to global singletons; use sources for other ids)", s)
			continue
		}
		if _, known := l.names[typ]; !known {
			l.errorf(p, m.val.start, "aggregate type %q is not defined in aggregate_types; add it or fix the name", typ)
			continue
		}
		out = append(out, ProjectionInclude{Name: m.key, Type: typ, ID: id})
	}
	return out
}

// selectValue checks a select value: paths into the bindings, literals, nested objects, and
// the $map and $lookup transforms. vars are the $map variables in scope.
func (l *loader) selectValue(n *node, ptr string, bindings, vars []string) {
	switch n.kind {
	case kindString:
		l.selectPath(n, ptr, bindings, vars)
	case kindArray:
		for i, e := range n.elems {
			l.selectValue(e, index(ptr, i), bindings, vars)
		}
	case kindObject:
		switch {
		case n.get("$map") != nil:
			l.selectMap(n, ptr, bindings, vars)
		case n.get("$lookup") != nil:
			l.selectLookup(n, ptr, bindings, vars)
		default:
			for _, m := range n.members {
				l.selectValue(m.val, join(ptr, m.key), bindings, vars)
			}
		}
	}
}

func (l *loader) selectPath(n *node, ptr string, bindings, vars []string) {
	s := n.str
	if !strings.HasPrefix(s, "$") {
		return
	}
	if strings.Contains(s, "[*]") {
		l.errorf(ptr, n.start, "[*] is allowed only in projection source id paths; use $map to go over an array")
		return
	}
	if _, ok := l.path(n, ptr, "select path"); !ok {
		return
	}
	if strings.HasPrefix(s, "$.") {
		l.bindingRoot(s, n, ptr, bindings, "a source or include")
		return
	}
	v := s
	if i := strings.IndexAny(v, ".[?"); i >= 0 {
		v = v[:i]
	}
	if !contains(vars, v) {
		l.errorf(ptr, n.start, "path %q uses %s, which no enclosing $map binds", s, v)
	}
}

func (l *loader) selectMap(n *node, ptr string, bindings, vars []string) {
	if !l.object(n, ptr, "a $map", mapSelectKeys...) {
		return
	}
	l.selectPath(n.get("$map"), join(ptr, "$map"), bindings, vars)
	as := "$item"
	if v := n.get("as"); v != nil {
		if s, ok := l.binding(v, join(ptr, "as"), "$map.as"); ok {
			as = s
		}
	}
	if v := l.required(n, ptr, "to", "a $map"); v != nil {
		l.selectValue(v, join(ptr, "to"), bindings, append(vars[:len(vars):len(vars)], as))
	}
}

func (l *loader) selectLookup(n *node, ptr string, bindings, vars []string) {
	if !l.object(n, ptr, "a $lookup", lookupKeys...) {
		return
	}
	l.selectPath(n.get("$lookup"), join(ptr, "$lookup"), bindings, vars)
	if v := l.required(n, ptr, "where", "a $lookup"); v != nil {
		wp := join(ptr, "where")
		if l.want(v, wp, kindObject, "$lookup.where") {
			if len(v.members) == 0 {
				l.errorf(wp, v.start, "$lookup.where must name a field to match, such as {\"id\": \"$item.product_id\"}")
			}
			for _, m := range v.members {
				l.selectValue(m.val, join(wp, m.key), bindings, vars)
			}
		}
	}
	// select is relative to the element found, so "$." here does not name a binding.
	if v := l.required(n, ptr, "select", "a $lookup"); v != nil {
		l.path(v, join(ptr, "select"), "$lookup.select")
	}
}
