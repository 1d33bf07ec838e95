package spec

import (
	"github.com/j17-go/j17/tick"
)

var (
	sagaKeys    = []string{"trigger", "steps", "on_complete", "on_failed"}
	triggerKeys = []string{"aggregate_type", "event_type"}
	stepKeys    = []string{"name", "emit", "await", "compensate", "timeout_ms", "condition"}
	awaitKeys   = []string{"aggregate_type", "event_types"}
)

// Saga limits of the Sagas page.
const (
	MaxSagaSteps = 50
	// maxStepTimeoutMS bounds a step's wait; a year matches the scheduler's horizon.
	maxStepTimeoutMS = int64(MaxScheduleDelay / 1e6)
)

func (l *loader) sagas(n *node, ptr string) {
	if !l.want(n, ptr, kindObject, "modules.sagas") {
		return
	}
	for _, m := range n.members {
		p := join(ptr, m.key)
		if !validName(m.key) {
			l.errorf(p, m.keyAt, "saga name %q may use only letters, digits, '_' and '-'; rename it", m.key)
			continue
		}
		if s := l.saga(m.key, m.val, p); s != nil {
			l.s.modules.Sagas = append(l.s.modules.Sagas, s)
			ref := EventRef{s.Trigger.AggregateType, s.Trigger.EventType}
			l.s.sagasByTrigger[ref] = append(l.s.sagasByTrigger[ref], s)
		}
	}
}

func (l *loader) saga(name string, n *node, ptr string) *Saga {
	what := "saga " + quote(name)
	errs := l.r.count()
	if !l.object(n, ptr, what, sagaKeys...) {
		return nil
	}
	s := &Saga{Name: name}
	if v := l.required(n, ptr, "trigger", what); v != nil {
		p := join(ptr, "trigger")
		if l.object(v, p, "a saga trigger", triggerKeys...) {
			s.Trigger.AggregateType, s.Trigger.EventType = l.target(v, p, "a saga trigger", true)
		}
	}
	if v := l.required(n, ptr, "steps", what); v != nil {
		s.Steps = l.steps(v, join(ptr, "steps"))
	}
	if v := n.get("on_complete"); v != nil {
		s.OnComplete = l.emit(v, join(ptr, "on_complete"), tick.TemplateOptions{Prev: true, Context: true}, "on_complete")
	}
	if v := n.get("on_failed"); v != nil {
		s.OnFailed = l.emit(v, join(ptr, "on_failed"), tick.TemplateOptions{Prev: true, Context: true, Error: true}, "on_failed")
	}
	if l.r.count() > errs {
		return nil
	}
	return s
}

func (l *loader) steps(n *node, ptr string) []*SagaStep {
	if !l.want(n, ptr, kindArray, "steps") {
		return nil
	}
	switch {
	case len(n.elems) == 0:
		l.errorf(ptr, n.start, "a saga needs at least one step")
		return nil
	case len(n.elems) > MaxSagaSteps:
		l.errorf(ptr, n.start, "a saga has at most %d steps, this one has %d; split it into several sagas", MaxSagaSteps, len(n.elems))
		return nil
	}
	var out []*SagaStep
	var names []string
	for i, e := range n.elems {
		p := index(ptr, i)
		if !l.object(e, p, "a saga step", stepKeys...) {
			continue
		}
		st := &SagaStep{}
		what := "saga step " + index("", i)[1:]
		if v := l.required(e, p, "name", what); v != nil {
			np := join(p, "name")
			if s, ok := l.nonEmptyString(v, np, "step name"); ok {
				if contains(names, s) {
					l.errorf(np, v.start, "step name %q is used by an earlier step; step names must be unique within a saga", s)
				}
				names = append(names, s)
				st.Name = s
				what = "saga step " + quote(s)
			}
		}
		opts := tick.TemplateOptions{Prev: true, Context: true}
		if v := e.get("condition"); v != nil {
			st.Condition = l.predicate(v, join(p, "condition"), opts)
		}
		if v := l.required(e, p, "emit", what); v != nil {
			st.Emit = l.emit(v, join(p, "emit"), opts, "emit")
		}
		if v := e.get("compensate"); v != nil {
			st.Compensate = l.emit(v, join(p, "compensate"), opts, "compensate")
		}
		if v := e.get("await"); v != nil {
			st.Await = l.await(v, join(p, "await"))
		}
		if v := e.get("timeout_ms"); v != nil {
			if ms, ok := l.integer(v, join(p, "timeout_ms"), "timeout_ms", 1, maxStepTimeoutMS); ok {
				st.Timeout = msDuration(ms)
			}
		} else if e.get("await") != nil {
			l.errorf(p, e.start, "%s has \"await\" but no \"timeout_ms\": add how long to wait, such as \"timeout_ms\": 30000", what)
		}
		out = append(out, st)
	}
	return out
}

func (l *loader) await(n *node, ptr string) *SagaAwait {
	if !l.object(n, ptr, "await", awaitKeys...) {
		return nil
	}
	a := &SagaAwait{}
	var aggOK bool
	if v := l.required(n, ptr, "aggregate_type", "await"); v != nil {
		p := join(ptr, "aggregate_type")
		if s, ok := l.nonEmptyString(v, p, "aggregate_type"); ok {
			if _, known := l.names[s]; !known {
				l.errorf(p, v.start, "aggregate type %q is not defined in aggregate_types; add it or fix the name", s)
			} else {
				a.AggregateType, aggOK = s, true
			}
		}
	}
	if v := l.required(n, ptr, "event_types", "await"); v != nil {
		p := join(ptr, "event_types")
		list, _ := l.stringList(v, p, "event_types")
		if v.kind == kindArray && len(v.elems) == 0 {
			l.errorf(p, v.start, "await.event_types must list at least one event type")
		}
		for i, s := range list {
			if aggOK && !l.names[a.AggregateType][s] {
				l.errorf(index(p, i), v.elems[i].start, "event type %q is not defined on aggregate type %q; add it to its events or fix the name", s, a.AggregateType)
			}
		}
		a.EventTypes = list
	}
	return a
}
