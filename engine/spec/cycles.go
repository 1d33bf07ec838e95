package spec

import "strings"

// detectCycles rejects static implication cycles: an event type that, through emit, map and
// pipeline implications, implies itself again. Such a spec would fail every write of that event
// type on the depth limit. Scheduled implications are not edges: they fire in a later request,
// and rescheduling chains are how recurring events are built.
func (l *loader) detectCycles() {
	out := map[EventRef][]edge{}
	var order []EventRef
	for _, e := range l.edges {
		if _, seen := out[e.from]; !seen {
			order = append(order, e.from)
		}
		out[e.from] = append(out[e.from], e)
		if !containsRef(l.s.implies[e.from], e.to) {
			l.s.implies[e.from] = append(l.s.implies[e.from], e.to)
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := map[EventRef]int{}
	var stack []EventRef
	var visit func(v EventRef)
	visit = func(v EventRef) {
		color[v] = grey
		stack = append(stack, v)
		for _, e := range out[v] {
			switch color[e.to] {
			case white:
				visit(e.to)
			case grey:
				l.reportCycle(stack, e)
			}
		}
		stack = stack[:len(stack)-1]
		color[v] = black
	}
	for _, v := range order {
		if color[v] == white {
			visit(v)
		}
	}
}

func (l *loader) reportCycle(stack []EventRef, closing edge) {
	start := len(stack) - 1
	for stack[start] != closing.to {
		start--
	}
	names := make([]string, 0, len(stack)-start+1)
	for _, r := range stack[start:] {
		names = append(names, r.Aggregate+"."+r.Event)
	}
	names = append(names, closing.to.Aggregate+"."+closing.to.Event)
	l.errorf(closing.ptr, closing.off, "implication cycle %s: every write would exceed the depth limit; break the cycle (a schedule implication may re-trigger later)", strings.Join(names, " → "))
}

func containsRef(list []EventRef, r EventRef) bool {
	for _, x := range list {
		if x == r {
			return true
		}
	}
	return false
}
