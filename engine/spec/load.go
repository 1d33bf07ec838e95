package spec

import (
	"errors"
	"strings"

	"github.com/j17-go/j17/tick"
)

// Load parses, validates and compiles a spec document, bare or wrapped as {"spec": {...}}. On
// any error the Spec is nil and the Report lists every problem found; warnings never block.
// Pointers, lines and columns in the Report refer to raw as given (a wrapped document's
// pointers start with /spec).
func Load(raw []byte) (*Spec, *Report) {
	text := string(raw)
	r := &reporter{}
	if len(raw) > MaxSpecBytes {
		r.errorf("", 0, "the spec is %d bytes; the limit is %d bytes: split it or remove unused definitions", len(raw), MaxSpecBytes)
		return nil, r.report(text)
	}
	root, dups, serr := parseTree(text)
	if serr != nil {
		r.errorf("", serr.off, "invalid JSON: %s", serr.msg)
		return nil, r.report(text)
	}
	for _, d := range dups {
		r.errorf(d.ptr, d.off, "key %q appears twice in the same object; keep only one", d.key)
	}
	l := &loader{checker: checker{r: r}, s: newSpec(text)}
	doc, base := l.unwrap(root)
	if doc != nil {
		l.s.doc = []byte(text[doc.start:doc.end])
		l.top(doc, base)
	}
	rep := r.report(text)
	if !rep.OK() {
		return nil, rep
	}
	return l.s, rep
}

// loader builds a Spec from a node tree.
type loader struct {
	checker
	s *Spec
	// names holds every declared aggregate type and its event types, collected before the
	// full walk so that references (implications, sagas, projections) can be checked in any order.
	names map[string]map[string]bool
	// edges of the implication graph, for cycle detection.
	edges []edge
	// unsupported records features that parse but that this server cannot run.
	unsupported []unsupportedUse
}

func (l *loader) unwrap(root *node) (*node, string) {
	if root.kind != kindObject {
		l.errorf("", root.start, "a spec must be a JSON object, not %s", root.kind)
		return nil, ""
	}
	inner := root.get("spec")
	if inner == nil {
		return root, ""
	}
	for _, m := range root.members {
		if m.key != "spec" {
			l.errorf(join("", m.key), m.keyAt, "unknown key %q next to \"spec\": a wrapped spec has only the \"spec\" key; move it inside", m.key)
		}
	}
	if !l.want(inner, "/spec", kindObject, "spec") {
		return nil, ""
	}
	l.s.wrapped = true
	return inner, "/spec"
}

var topKeys = []string{"aggregate_types", "agent_types", "target_types", "modules", "geo_types", "projections", "singletons"}

func (l *loader) top(n *node, ptr string) {
	l.object(n, ptr, "the spec", topKeys...)
	l.collectNames(n.get("aggregate_types"))
	if v := l.required(n, ptr, "agent_types", "the spec"); v != nil {
		l.agentTypes(v, join(ptr, "agent_types"))
	}
	if v := n.get("target_types"); v != nil {
		p := join(ptr, "target_types")
		l.s.targetTypes, _ = l.stringList(v, p, "target_types")
	}
	if v := n.get("singletons"); v != nil {
		l.singletons(v, join(ptr, "singletons"))
	}
	if v := n.get("geo_types"); v != nil {
		l.geoTypes(v, join(ptr, "geo_types"))
	}
	if v := l.required(n, ptr, "aggregate_types", "the spec"); v != nil {
		l.aggregateTypes(v, join(ptr, "aggregate_types"))
	}
	l.s.aggregateNames = sortedKeys(l.s.aggregates)
	if v := n.get("modules"); v != nil {
		l.modules(v, join(ptr, "modules"))
	}
	if v := n.get("projections"); v != nil {
		l.projections(v, join(ptr, "projections"))
	}
	l.s.projNames = sortedKeys(l.s.projections)
	l.detectCycles()
	l.markStateReads()
	rejectUnsupported(&l.checker, l.unsupported)
}

func (l *loader) collectNames(n *node) {
	l.names = map[string]map[string]bool{}
	if n == nil || n.kind != kindObject {
		return
	}
	for _, m := range n.members {
		evs := map[string]bool{}
		l.names[m.key] = evs
		if e := m.val.get("events"); e != nil && e.kind == kindObject {
			for _, em := range e.members {
				evs[em.key] = true
			}
		}
	}
}

const systemPrefix = "system_"

func (l *loader) agentTypes(n *node, ptr string) {
	list, _ := l.stringList(n, ptr, "agent_types")
	if n.kind == kindArray && len(n.elems) == 0 {
		l.errorf(ptr, n.start, "agent_types must list at least one agent type, e.g. [\"user\"]")
	}
	for i, t := range list {
		e := n.elems[i]
		switch {
		case strings.HasPrefix(t, systemPrefix):
			l.errorf(index(ptr, i), e.start, "agent type %q uses the reserved prefix %q; rename it", t, systemPrefix)
		case !validName(t):
			l.errorf(index(ptr, i), e.start, "agent type %q may use only letters, digits, '_' and '-' (at most %d characters)", t, maxNameLen)
		}
	}
	l.s.agentTypes = list
}

// tickErrors reports the problems tick found in the sub-document n (at ptr).
func (c *checker) tickErrors(err error, n *node, ptr, what string) {
	var errs tick.Errors
	var one *tick.Error
	switch {
	case errors.As(err, &errs) && len(errs) > 0:
	case errors.As(err, &one):
		errs = tick.Errors{one}
	default:
		c.errorf(ptr, n.start, "%s: %v", what, err)
		return
	}
	for _, e := range errs {
		p, off := locate(n, ptr, e.Pointer)
		c.errorf(p, off, "%s", e.Message)
	}
}

// raw returns the text of a node.
func (l *loader) raw(n *node) []byte {
	return []byte(l.s.text[n.start:n.end])
}
