package spec

import (
	"fmt"
	"strings"
)

// CheckCompat lists what deploying next over prev would break: the blocked changes of the Spec
// page (a removed aggregate or event type, a new required field, a changed property type,
// additionalProperties turned false), checked recursively through nested object schemas.
// Everything else (new aggregate and event types, new optional fields, handler changes) is
// allowed. force skips the check, but only when prod is false: production always enforces it.
// Pointers, lines and columns refer to next's upload.
func CheckCompat(prev, next *Spec, force, prod bool) []Issue {
	if prev == nil || next == nil || (force && !prod) {
		return nil
	}
	pdoc, _ := docNode(prev)
	ndoc, base := docNode(next)
	if pdoc == nil || ndoc == nil {
		return nil
	}
	r := &reporter{}
	cc := &compatChecker{r: r, doc: ndoc, base: base}
	for _, agg := range prev.aggregateNames {
		pa := prev.aggregates[agg]
		na, ok := next.aggregates[agg]
		if !ok {
			cc.issue("/aggregate_types/"+escapePointer(agg), "aggregate type %q is removed, so its existing event streams would become unreadable; keep it", agg)
			continue
		}
		for _, ev := range pa.EventTypes {
			if _, ok := na.Events[ev]; !ok {
				cc.issue(fmt.Sprintf("/aggregate_types/%s/events/%s", escapePointer(agg), escapePointer(ev)),
					"event type %q of %q is removed, so existing events would fail aggregation; keep it with a permissive schema and a [] handler", ev, agg)
				continue
			}
			rel := fmt.Sprintf("/aggregate_types/%s/events/%s/schema", escapePointer(agg), escapePointer(ev))
			ps, _ := locateNode(pdoc, rel)
			ns, _ := locateNode(ndoc, rel)
			if ps != nil && ns != nil {
				cc.schema(ps, ns, rel, true)
			}
		}
	}
	return r.report(next.text).Errors
}

// CompatError returns nil when issues is empty, otherwise an error wrapping ErrIncompatible.
func CompatError(issues []Issue) error {
	if len(issues) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s (%d problems)", ErrIncompatible, issues[0], len(issues))
}

// docNode re-parses a loaded spec's upload; it parsed once already, so it cannot fail.
func docNode(s *Spec) (*node, string) {
	root, _, err := parseTree(s.text)
	if err != nil {
		return nil, ""
	}
	if s.wrapped {
		return root.get("spec"), "/spec"
	}
	return root, ""
}

// locateNode follows a pointer made of object keys.
func locateNode(n *node, rel string) (*node, bool) {
	for _, tok := range strings.Split(strings.TrimPrefix(rel, "/"), "/") {
		n = n.get(unescapePointer(tok))
		if n == nil {
			return nil, false
		}
	}
	return n, true
}

type compatChecker struct {
	r    *reporter
	doc  *node
	base string
}

func (cc *compatChecker) issue(rel, format string, args ...any) {
	ptr, off := locate(cc.doc, cc.base, rel)
	cc.r.errorf(ptr, off, format, args...)
}

// schema compares one (sub)schema of an existing event type with its replacement.
func (cc *compatChecker) schema(prev, next *node, rel string, root bool) {
	if prev.kind != kindObject || next.kind != kindObject {
		return
	}
	if req := next.get("required"); req != nil && req.kind == kindArray {
		old := stringSet(prev.get("required"))
		for i, e := range req.elems {
			if e.kind == kindString && !old[e.str] {
				cc.issue(index(rel+"/required", i), "adds the required field %q to an existing event schema, but existing events may not have it; make it optional", e.str)
			}
		}
	}
	if ap := next.get("additionalProperties"); ap != nil && ap.kind == kindBool && !ap.boolean {
		if old := prev.get("additionalProperties"); old == nil || old.kind != kindBool || old.boolean {
			cc.issue(rel+"/additionalProperties", "sets additionalProperties to false where extra properties were allowed, so existing events with extra fields would fail; remove it")
		}
	}
	if !root {
		cc.types(prev, next, rel)
	}
	pp, np := prev.get("properties"), next.get("properties")
	if pp != nil && np != nil && pp.kind == kindObject && np.kind == kindObject {
		for _, m := range pp.members {
			if nv := np.get(m.key); nv != nil {
				cc.schema(m.val, nv, rel+"/properties/"+escapePointer(m.key), false)
			}
		}
	}
	if pi, ni := prev.get("items"), next.get("items"); pi != nil && ni != nil {
		cc.schema(pi, ni, rel+"/items", false)
	}
}

// types blocks a property type change that existing values may not satisfy: every old type must
// still be accepted ("integer" is accepted by "number"); a type added where there was none is a
// change too.
func (cc *compatChecker) types(prev, next *node, rel string) {
	nt := next.get("type")
	if nt == nil {
		return
	}
	newTypes := stringSet(nt)
	if nt.kind == kindString {
		newTypes = map[string]bool{nt.str: true}
	}
	pt := prev.get("type")
	if pt == nil {
		cc.issue(rel+"/type", "gives property %s the type %s where it had none, but existing events may hold other types; remove the type", propertyName(rel), typeText(nt))
		return
	}
	oldTypes := stringSet(pt)
	if pt.kind == kindString {
		oldTypes = map[string]bool{pt.str: true}
	}
	for t := range oldTypes {
		if newTypes[t] || (t == "integer" && newTypes["number"]) {
			continue
		}
		cc.issue(rel+"/type", "changes the type of property %s from %s to %s, but existing events have the old type; keep the old type (a new property can take the new one)", propertyName(rel), typeText(pt), typeText(nt))
		return
	}
}

func stringSet(n *node) map[string]bool {
	out := map[string]bool{}
	if n != nil && n.kind == kindArray {
		for _, e := range n.elems {
			if e.kind == kindString {
				out[e.str] = true
			}
		}
	}
	return out
}

func typeText(n *node) string {
	if n.kind == kindString {
		return quote(n.str)
	}
	var parts []string
	for _, e := range n.elems {
		parts = append(parts, e.str)
	}
	return "[" + quoteList(parts) + "]"
}

// propertyName names the property a schema pointer ends at, e.g. "address.zip".
func propertyName(rel string) string {
	_, after, _ := strings.Cut(rel, "/schema")
	var names []string
	toks := strings.Split(after, "/")
	for i := 0; i < len(toks); i++ {
		switch toks[i] {
		case "properties":
			if i+1 < len(toks) {
				names = append(names, unescapePointer(toks[i+1]))
				i++
			}
		case "items":
			names = append(names, "[]")
		}
	}
	return quote(strings.ReplaceAll(strings.Join(names, "."), ".[]", "[]"))
}
