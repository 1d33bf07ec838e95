package spec

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadFile loads the spec section of a testdata/load file that must load cleanly.
func loadFile(t *testing.T, name string) *Spec {
	t.Helper()
	tc := readCase(t, "testdata/load/"+name+".txt")
	s, rep := Load([]byte(tc.sections[0]))
	if !rep.OK() {
		t.Fatalf("%s does not load:\n%s", name, formatReport(rep))
	}
	return s
}

func TestLoadWrappedEqualsBare(t *testing.T) {
	bare := `{"aggregate_types": {"user": {"events": {"was_created": {"schema": {"type": "object"}, "handler": []}}}}, "agent_types": ["user"]}`
	wrapped := `{"spec": ` + bare + `}`
	for _, text := range []string{bare, wrapped} {
		s, rep := Load([]byte(text))
		if !rep.OK() {
			t.Fatalf("Load(%s): %s", text, formatReport(rep))
		}
		if got := string(s.Document()); got != bare {
			t.Errorf("Document() of %s = %s, want the unwrapped spec %s", text, got, bare)
		}
		if _, ok := s.Event("user", "was_created"); !ok {
			t.Errorf("Event(user, was_created) missing after loading %s", text)
		}
	}
}

func TestDocumentIsACopy(t *testing.T) {
	raw := []byte(`{"aggregate_types": {}, "agent_types": ["user"]}`)
	s, rep := Load(raw)
	if !rep.OK() {
		t.Fatal(formatReport(rep))
	}
	want := string(raw)
	copy(raw, bytes.Repeat([]byte("x"), len(raw)))
	if got := string(s.Document()); got != want {
		t.Errorf("Document() changed with the caller's buffer: got %s, want %s", got, want)
	}
}

func TestLoadTooLarge(t *testing.T) {
	raw := append([]byte(`{"agent_types": ["user"], "aggregate_types": {}, "x": "`), bytes.Repeat([]byte("a"), MaxSpecBytes)...)
	s, rep := Load(append(raw, `"}`...))
	if s != nil || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "limit") {
		t.Fatalf("got spec=%v errors=%v, want one size error", s != nil, rep.Errors)
	}
}

func TestLoadDeepNesting(t *testing.T) {
	raw := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	_, rep := Load([]byte(raw))
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "deeper") {
		t.Fatalf("got %v, want one nesting error", rep.Errors)
	}
}

func TestReportErr(t *testing.T) {
	_, rep := Load([]byte(`{"aggregate_types": {}, "agent_types": []}`))
	if err := rep.Err(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Err() = %v, want it to wrap ErrInvalid", err)
	}
	_, rep = Load([]byte(`{"aggregate_types": {}, "agent_types": ["user"]}`))
	if err := rep.Err(); err != nil {
		t.Fatalf("Err() = %v for a valid spec, want nil", err)
	}
}

func TestCompatError(t *testing.T) {
	if err := CompatError(nil); err != nil {
		t.Errorf("CompatError(nil) = %v, want nil", err)
	}
	if err := CompatError([]Issue{{Message: "x"}}); !errors.Is(err, ErrIncompatible) {
		t.Errorf("CompatError = %v, want it to wrap ErrIncompatible", err)
	}
}

func TestAccessors(t *testing.T) {
	s := loadFile(t, "doc_scheduled_events")
	if got := strings.Join(s.AggregateTypes(), ","); got != "billing,cart,notification,order,reports,subscription,trial" {
		t.Errorf("AggregateTypes() = %s", got)
	}
	ev, ok := s.Event("cart", "had_item_added")
	if !ok || ev.Schema == nil || ev.Handler == nil || len(ev.Implications) != 1 {
		t.Fatalf("Event(cart, had_item_added) = %+v, %v", ev, ok)
	}
	sch := ev.Implications[0].Schedule
	if ev.Implications[0].Kind != KindSchedule || sch.Delay != 24*time.Hour || sch.Emit.AggregateType != "notification" || len(sch.CancelOn) != 1 {
		t.Errorf("schedule = %+v, want 24h to notification with one cancel_on", sch)
	}
	weekly, _ := s.Event("reports", "should_send_weekly")
	if d := weekly.Implications[0].Schedule.Delay; d != 7*24*time.Hour {
		t.Errorf("delay_ms 604800000 = %v, want 168h", d)
	}
	if !s.CancelsScheduled("cart", "was_checked_out") || s.CancelsScheduled("cart", "had_item_added") {
		t.Error("CancelsScheduled: want true for cart.was_checked_out only")
	}
	if !s.IsAgentType("user") || s.IsAgentType("system_agent") {
		t.Error("IsAgentType: want user and not system_agent")
	}
	if !s.IsSingleton("global") || s.IsSingleton("config") {
		t.Error("IsSingleton: want the implicit global only")
	}
	if _, ok := s.Event("cart", "nope"); ok {
		t.Error("Event(cart, nope) found")
	}
}

func TestImplies(t *testing.T) {
	s := loadFile(t, "doc_implications_patterns")
	want := []EventRef{{"inventory", "was_reserved"}, {"order", "had_backorder_created"}}
	if got := s.Implies("inventory", "had_reservation_requested"); !reflect.DeepEqual(got, want) {
		t.Errorf("Implies(inventory, had_reservation_requested) = %v, want %v", got, want)
	}
	if got := s.Implies("order", "was_placed"); !reflect.DeepEqual(got, []EventRef{{"inventory", "had_reservation_requested"}}) {
		t.Errorf("Implies(order, was_placed) = %v (map implication)", got)
	}
	if got := loadFile(t, "doc_scheduled_events").Implies("cart", "had_item_added"); len(got) != 0 {
		t.Errorf("a schedule is not a same-request implication, got %v", got)
	}
}

func TestStateReads(t *testing.T) {
	s := loadFile(t, "doc_implications_patterns")
	for _, tc := range []struct {
		agg, ev      string
		own, inChain bool
	}{
		// The map reads only the trigger, but the events it implies test @.available.
		{"order", "was_placed", false, true},
		{"inventory", "had_reservation_requested", true, true},
		{"inventory", "was_reserved", false, false},
		{"post", "was_posted", false, false},
	} {
		ev, ok := s.Event(tc.agg, tc.ev)
		if !ok {
			t.Fatalf("no event %s.%s", tc.agg, tc.ev)
		}
		if ev.ImplicationsReadState != tc.own || ev.ChainReadsState != tc.inChain {
			t.Errorf("%s.%s: ImplicationsReadState %v, ChainReadsState %v; want %v, %v", tc.agg, tc.ev, ev.ImplicationsReadState, ev.ChainReadsState, tc.own, tc.inChain)
		}
	}
}

func TestStateReadsByKind(t *testing.T) {
	ev := func(implications string) string {
		return `{"schema": {"type": "object"}, "handler": [], "implications": ` + implications + `}`
	}
	emit := func(data string) string {
		return `{"aggregate_type": "log", "id": "$.data.log", "event_type": "was_noted", "data": ` + data + `}`
	}
	doc := `{"agent_types": ["user"], "aggregate_types": {
		"order": {"events": {
			"pipeline_reads": ` + ev(`[{"pipeline": [{"emit": `+emit(`{}`)+`}, {"emit": `+emit(`{"n": "@.n"}`)+`}]}]`) + `,
			"schedule_reads": ` + ev(`[{"schedule": {"delay": "10m", "emit": `+emit(`{"n": "$.state.n"}`)+`}}]`) + `,
			"cancel_reads": ` + ev(`[{"schedule": {"delay": "10m", "emit": `+emit(`{}`)+`, "cancel_on": [{"aggregate_type": "log", "id": "@.log", "event_type": "was_noted"}]}}]`) + `,
			"map_in_reads": ` + ev(`[{"map": {"in": "@.lines", "as": "$line", "emit": `+emit(`{"x": "$line.x"}`)+`}}]`) + `,
			"map_condition_reads": ` + ev(`[{"map": {"in": "$.data.lines", "as": "$line", "condition": {"gt": ["$line.n", "@.n"]}, "emit": `+emit(`{}`)+`}}]`) + `,
			"condition_reads": ` + ev(`[{"condition": {"exists": "@.n"}, "emit": `+emit(`{}`)+`}]`) + `,
			"reads_nothing": ` + ev(`[{"schedule": {"delay": "10m", "emit": `+emit(`{"n": "$.data.n"}`)+`}}, {"emit": `+emit(`{"n": "$.data.n"}`)+`}]`) + `,
			"starts_saga_downstream": ` + ev(`[{"emit": {"aggregate_type": "audit", "id": "$.data.a", "event_type": "was_opened", "data": {}}}]`) + `
		}},
		"log": {"events": {"was_noted": {"schema": {"type": "object"}, "handler": []}}},
		"audit": {"events": {"was_opened": {"schema": {"type": "object"}, "handler": []}}}
	}, "modules": {"sagas": {"follow": {"trigger": {"aggregate_type": "audit", "event_type": "was_opened"},
		"steps": [{"name": "note", "emit": {"aggregate_type": "log", "id": "$.id", "event_type": "was_noted", "data": {}}}]}}}}`
	s, rep := Load([]byte(doc))
	if !rep.OK() {
		t.Fatalf("does not load:\n%s", formatReport(rep))
	}
	for name, want := range map[string][2]bool{
		"pipeline_reads": {true, true}, "schedule_reads": {true, true}, "cancel_reads": {true, true},
		"map_in_reads": {true, true}, "map_condition_reads": {true, true}, "condition_reads": {true, true},
		"reads_nothing": {false, false}, "starts_saga_downstream": {false, true},
	} {
		e, _ := s.Event("order", name)
		if got := [2]bool{e.ImplicationsReadState, e.ChainReadsState}; got != want {
			t.Errorf("order.%s: ImplicationsReadState, ChainReadsState = %v, want %v", name, got, want)
		}
	}
}

func TestReservedEvent(t *testing.T) {
	s := loadFile(t, "doc_spec_complete_bare")
	ev, ok := s.Event("task", "_was_tombstoned")
	if !ok || !ev.Reserved || ev.Schema != nil || ev.Handler == nil {
		t.Fatalf("_was_tombstoned = %+v, want reserved, no schema, a [] handler", ev)
	}
	if got := s.TargetTypes(); strings.Join(got, ",") != "project,task" {
		t.Errorf("TargetTypes() = %v", got)
	}
}

func TestCached(t *testing.T) {
	cases := []struct {
		file string
		agg  string
		want bool
	}{
		{"doc_getting_started", "user", true},        // no modules: everything cached
		{"doc_spec_modules", "order", true},          // never_cache lists audit_log only
		{"doc_caching", "user", true},                // deprecated opt-in list
		{"doc_caching", "audit_log", false},          // not in the opt-in list
		{"doc_spec_complete_bare", "task", true},     // cache: ["task"]
		{"doc_spec_complete_bare", "project", false}, // not in cache
	}
	for _, c := range cases {
		if got := loadFile(t, c.file).Cached(c.agg); got != c.want {
			t.Errorf("%s: Cached(%s) = %v, want %v", c.file, c.agg, got, c.want)
		}
	}
	s, rep := Load([]byte(`{"aggregate_types": {"a": {"events": {}}, "b": {"events": {}}}, "agent_types": ["u"],
		"modules": {"never_cache": ["a"], "cache": ["a"]}}`))
	if !rep.OK() {
		t.Fatal(formatReport(rep))
	}
	if s.Cached("a") || !s.Cached("b") {
		t.Errorf("with never_cache and cache: Cached(a)=%v Cached(b)=%v, want false, true (never_cache wins)", s.Cached("a"), s.Cached("b"))
	}
}

func TestSagas(t *testing.T) {
	s := loadFile(t, "doc_sagas_checkout")
	sagas := s.SagasTriggeredBy("cart", "checkout_started")
	if len(sagas) != 1 || sagas[0].Name != "checkout" {
		t.Fatalf("SagasTriggeredBy(cart, checkout_started) = %v", sagas)
	}
	c := sagas[0]
	if len(c.Steps) != 4 || c.Steps[0].Timeout != 30*time.Second || c.Steps[0].Await == nil || c.Steps[2].Await != nil {
		t.Errorf("steps = %+v", c.Steps)
	}
	if c.Steps[1].Condition == nil || c.Steps[0].Compensate == nil || c.OnFailed == nil || c.OnComplete == nil {
		t.Errorf("checkout saga lost a condition, compensation or lifecycle event")
	}
	if len(s.SagasTriggeredBy("order", "checkout_completed")) != 0 {
		t.Error("a saga is triggered by order.checkout_completed")
	}
}

func TestTombstoneScanned(t *testing.T) {
	s := loadFile(t, "doc_tombstones")
	if got := s.TombstoneScanned(); strings.Join(got, ",") != "message" {
		t.Errorf("TombstoneScanned() = %v, want [message]", got)
	}
	a, _ := s.Aggregate("user")
	if a.OnTombstone.Configured {
		t.Error("user has no onTombstone but Configured is true")
	}
	m, _ := s.Aggregate("message")
	if m.OnTombstone != (OnTombstone{Configured: true, Actor: Cascade, Target: Preserve}) {
		t.Errorf("message onTombstone = %+v", m.OnTombstone)
	}
}

func TestProjections(t *testing.T) {
	s := loadFile(t, "doc_projections_guide")
	if got := strings.Join(s.Projections(), ","); got != "order_summary,order_with_details,user_dashboard" {
		t.Errorf("Projections() = %s", got)
	}
	p, _ := s.Projection("order_with_details")
	if p.ForEach != "order" || len(p.Sources) != 3 || !p.Sources[0].IsKey || !p.Sources[2].Array || p.Sources[1].Type != "customer" {
		t.Errorf("sources = %+v", p.Sources)
	}
	if len(p.Include) != 1 || p.Include[0] != (ProjectionInclude{Name: "pricing", Type: "pricing_rules", ID: "global"}) {
		t.Errorf("include = %+v", p.Include)
	}
	if !bytes.HasPrefix(p.Select, []byte("{")) {
		t.Errorf("select = %s", p.Select)
	}
}

func TestGeo(t *testing.T) {
	s := loadFile(t, "doc_spec_geo")
	ev, _ := s.Event("store", "was_registered")
	if ev.Geo == nil || ev.Geo.Type != "point" || ev.Geo.Path.String() != "$.data.location" {
		t.Errorf("geo = %+v", ev.Geo)
	}
	g, ok := s.GeoType("delivery_zone")
	if !ok || g.Type != "polygon" || len(g.Properties) != 2 {
		t.Errorf("GeoType(delivery_zone) = %+v, %v", g, ok)
	}
}

func TestSkipOCC(t *testing.T) {
	ev, _ := loadFile(t, "doc_skip_occ").Event("audit", "entry_was_added")
	if !ev.AllowSkipOCC {
		t.Error("AllowSkipOCC = false, want true")
	}
}

// TestUnsupportedIsOneRule checks that WASM and container configurations compile into the
// Spec, so that dropping rejectUnsupported is all it takes to accept them.
func TestUnsupportedIsOneRule(t *testing.T) {
	for _, name := range []string{"doc_wasm_handlers", "doc_implications_reference_wasm_containers", "doc_implications_reference_pipeline"} {
		tc := readCase(t, "testdata/load/"+name+".txt")
		text := tc.sections[0]
		root, _, serr := parseTree(text)
		if serr != nil {
			t.Fatal(serr.msg)
		}
		l := &loader{checker: checker{r: &reporter{}}, s: newSpec(text)}
		l.top(root, "")
		rep := l.r.report(text)
		if len(rep.Errors) != len(l.unsupported) {
			t.Fatalf("%s: %d errors for %d unsupported uses; every error should be the unsupported rule:\n%s", name, len(rep.Errors), len(l.unsupported), formatReport(rep))
		}
		for _, is := range rep.Errors {
			if !strings.Contains(is.Message, "not supported") {
				t.Errorf("%s: unexpected error %s", name, is)
			}
		}
	}
	cfg := func(name, agg, ev string) *WASMConfig {
		tc := readCase(t, "testdata/load/"+name+".txt")
		root, _, _ := parseTree(tc.sections[0])
		l := &loader{checker: checker{r: &reporter{}}, s: newSpec(tc.sections[0])}
		l.top(root, "")
		return l.s.aggregates[agg].Events[ev].WASM
	}
	if got := cfg("doc_wasm_handlers", "order", "had_item_added"); *got != (WASMConfig{BlobName: "order-handler.wasm", Entrypoint: DefaultHandlerEntrypoint, Timeout: DefaultWASMTimeout}) {
		t.Errorf("short form = %+v", got)
	}
	if got := cfg("doc_wasm_handlers", "order", "had_item_removed"); *got != (WASMConfig{BlobName: "order-handler.wasm", Entrypoint: "handle_item_added", Timeout: 100 * time.Millisecond}) {
		t.Errorf("long form = %+v", got)
	}
}

func TestConcurrentReads(t *testing.T) {
	s := loadFile(t, "doc_sagas_checkout")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				for _, a := range s.AggregateTypes() {
					agg, _ := s.Aggregate(a)
					for _, e := range agg.EventTypes {
						s.Event(a, e)
						s.SagasTriggeredBy(a, e)
					}
					s.Cached(a)
				}
			}
		}()
	}
	wg.Wait()
}

// TestDocExamplesCovered fails when a doc_ testdata file is added without a comment that
// names its source, so that the list of adapted examples stays honest.
func TestDocExamplesCovered(t *testing.T) {
	entries, _ := os.ReadDir("testdata/load")
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "doc_") {
			continue
		}
		tc := readCase(t, "testdata/load/"+e.Name())
		if len(tc.comments) == 0 {
			t.Errorf("%s has no comment naming the documentation example", e.Name())
		}
	}
}
