package spec

// markStateReads sets every event type's ImplicationsReadState and ChainReadsState. It runs
// after the sagas are loaded and after detectCycles, over the graph that check built; a cycle it
// reported is walked once.
func (l *loader) markStateReads() {
	for _, agg := range l.s.aggregates {
		for _, ev := range agg.Events {
			ev.ImplicationsReadState = anyReadsState(ev.Implications)
		}
	}
	done := map[EventRef]bool{}
	var visit func(ref EventRef) bool
	visit = func(ref EventRef) bool {
		ev, ok := l.s.Event(ref.Aggregate, ref.Event)
		if !ok {
			return false
		}
		if done[ref] {
			return ev.ChainReadsState
		}
		done[ref] = true
		reads := ev.ImplicationsReadState
		for _, next := range l.s.implies[ref] {
			// Every edge is visited, even once reads is known, so that each event type
			// reached gets its own flag. A saga an implied event starts keeps a snapshot of
			// that event's aggregate: a read of its state too.
			reads = visit(next) || len(l.s.sagasByTrigger[next]) > 0 || reads
		}
		ev.ChainReadsState = reads
		return reads
	}
	for name, agg := range l.s.aggregates {
		for evName := range agg.Events {
			visit(EventRef{name, evName})
		}
	}
}

func anyReadsState(list []*Implication) bool {
	for _, im := range list {
		if im.readsState() {
			return true
		}
	}
	return false
}

// readsState reports whether running the implication may read the state of the aggregate its
// trigger is written to. Kinds that run code of their own are taken to read it. It also runs on
// the parts of a spec that failed to load, so every part may be missing.
func (im *Implication) readsState() bool {
	if im.Condition != nil && im.Condition.ReadsState() {
		return true
	}
	switch im.Kind {
	case KindEmit:
		return im.Emit.readsState()
	case KindMap:
		m := im.Map
		return m != nil && (m.In.IsState() || m.Condition != nil && m.Condition.ReadsState() || m.Emit.readsState())
	case KindSchedule:
		if im.Schedule == nil {
			return false
		}
		if im.Schedule.Emit.readsState() {
			return true
		}
		for _, c := range im.Schedule.CancelOn {
			if c.ID != nil && c.ID.ReadsState() {
				return true
			}
		}
		return false
	case KindPipeline:
		return anyReadsState(im.Pipeline)
	}
	return true
}

func (e *Emit) readsState() bool {
	return e != nil && (e.ID != nil && e.ID.ReadsState() || e.Data != nil && e.Data.ReadsState())
}
