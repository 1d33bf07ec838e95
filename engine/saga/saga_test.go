package saga

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/tick"
)

const testSpec = `{
  "agent_types": ["user"],
  "aggregate_types": {
    "job": {"events": {"was_started": {"schema": {"type": "object"}, "handler": []}, "was_done": {"schema": {"type": "object"}, "handler": []}, "was_undone": {"schema": {"type": "object"}, "handler": []}, "was_finished": {"schema": {"type": "object"}, "handler": []}, "has_failed": {"schema": {"type": "object"}, "handler": []}}}
  },
  "modules": {"sagas": {"flow": {
    "trigger": {"aggregate_type": "job", "event_type": "was_started"},
    "steps": [
      {"name": "a", "emit": {"aggregate_type": "job", "id": "$.data.id", "event_type": "was_done", "data": {"n": 1, "opt": "$.data.missing?"}},
       "compensate": {"aggregate_type": "job", "id": "$.data.id", "event_type": "was_undone", "data": {}}},
      {"name": "b", "emit": {"aggregate_type": "job", "id": "$.data.id", "event_type": "was_done", "data": {"n": 2}}},
      {"name": "c", "emit": {"aggregate_type": "job", "id": "$.data.id", "event_type": "was_done", "data": {"n": 3}},
       "await": {"aggregate_type": "job", "event_types": ["was_finished"]}, "timeout_ms": 1000,
       "compensate": {"aggregate_type": "job", "id": "$.data.id", "event_type": "was_undone", "data": {"of": "$context.c.data.code"}}},
      {"name": "d", "condition": {"equals": ["$prev.type", "was_finished"]}, "emit": {"aggregate_type": "job", "id": "$.data.id", "event_type": "was_done", "data": {"n": 4}}}
    ],
    "on_complete": {"aggregate_type": "job", "id": "$.data.id", "event_type": "was_finished", "data": {"by": "@.owner"}},
    "on_failed": {"aggregate_type": "job", "id": "$.data.id", "event_type": "has_failed", "data": {"error": "$error.message", "step": "$error.step"}}
  }}}
}`

func testSaga(t *testing.T) (*spec.Saga, *State) {
	t.Helper()
	sp, report := spec.Load([]byte(testSpec))
	if !report.OK() {
		t.Fatal(report.Err())
	}
	def := sp.Sagas()[0]
	st := New("saga_1", "flow", []string{"a", "b", "c", "d"}, 1, Event{
		AggregateType: "job", ID: "global", Type: "was_started", Data: json.RawMessage(`{"id":"global"}`),
	}, json.RawMessage(`{"owner":"ann"}`), 100)
	return def, st
}

// step takes act as the runner does when its event was written.
func step(t *testing.T, def *spec.Saga, st *State, now int64, want Kind) (*State, Action) {
	t.Helper()
	act := Next(def, st, now)
	if act.Kind != want {
		t.Fatalf("at step %d: got action %d, want %d", st.Current, act.Kind, want)
	}
	if act.Kind == Emit {
		sc, err := st.Scope()
		if err != nil {
			t.Fatal(err)
		}
		r, err := Render(act.Emit, sc)
		if err != nil {
			t.Fatal(err)
		}
		Emitted(&act, r.EventType, r.Data, "global", 7)
	}
	return act.After, act
}

func render(t *testing.T, e *spec.Emit, st *State) string {
	t.Helper()
	sc, err := st.Scope()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Render(e, sc)
	if err != nil {
		t.Fatal(err)
	}
	return string(r.Data)
}

func TestStepsRunInOrderAndComplete(t *testing.T) {
	def, st := testSaga(t)
	if got := render(t, def.Steps[0].Emit, st); got != `{"n":1}` {
		t.Errorf("optional path: got data %s, want {\"n\":1}", got)
	}
	st, _ = step(t, def, st, 1000, Emit)
	st, _ = step(t, def, st, 1000, Emit)
	st, _ = step(t, def, st, 1000, Emit)
	w := st.Waiting()
	if w == nil || w.Name != "c" || w.Deadline != 2000 || w.AwaitID != "global" || w.AwaitFrom != 7 {
		t.Fatalf("after c's emit: got waiting %+v, want c until 2000 after index 7", w)
	}
	if act := Next(def, st, 1999); act.Kind != Idle {
		t.Fatalf("before the deadline: got action %d, want Idle", act.Kind)
	}
	st = Matched(st, "was_finished", []byte(`{"code":"x"}`), 1500)
	st, _ = step(t, def, st, 1600, Emit)
	st, act := step(t, def, st, 1700, Finish)
	if st.Status != Completed || act.Emit != def.OnComplete {
		t.Fatalf("got status %s, want completed with on_complete", st.Status)
	}
	if got := render(t, act.Emit, st); got != `{"by":"ann"}` {
		t.Errorf("on_complete reads @ from the snapshot: got %s", got)
	}
	for i, s := range st.Steps {
		if s.Status != StepCompleted {
			t.Errorf("step %d: got %s, want completed", i, s.Status)
		}
	}
}

func TestConditionFalseSkips(t *testing.T) {
	def, st := testSaga(t)
	st, _ = step(t, def, st, 0, Emit)
	st, _ = step(t, def, st, 0, Emit)
	st, _ = step(t, def, st, 0, Emit)
	st = Matched(st, "other", []byte(`{}`), 10)
	st, _ = step(t, def, st, 10, Skip)
	if st.Steps[3].Status != StepSkipped {
		t.Fatalf("got d %s, want skipped", st.Steps[3].Status)
	}
	if st, _ = step(t, def, st, 10, Finish); st.Status != Completed {
		t.Fatalf("got %s, want completed", st.Status)
	}
}

func TestTimeoutCompensatesInReverseOrder(t *testing.T) {
	def, st := testSaga(t)
	st, _ = step(t, def, st, 0, Emit)
	st, _ = step(t, def, st, 0, Emit)
	st, _ = step(t, def, st, 0, Emit)
	st, _ = step(t, def, st, 1000, Timeout)
	if st.Steps[2].Status != StepFailed || st.Steps[2].Error.Message != "timeout" || st.Error.Step != "c" {
		t.Fatalf("got step c %+v, saga error %+v; want c failed by timeout", st.Steps[2], st.Error)
	}
	// c failed, so it is not compensated; b has no compensation; a is.
	st, act := step(t, def, st, 1001, Compensate)
	if act.Step != 0 {
		t.Fatalf("got compensation of step %d, want 0", act.Step)
	}
	st, act = step(t, def, st, 1002, Finish)
	if st.Status != Failed || act.Emit != def.OnFailed {
		t.Fatalf("got %s, want failed with on_failed", st.Status)
	}
	if got := render(t, act.Emit, st); got != `{"error":"timeout","step":"c"}` {
		t.Errorf("on_failed: got %s", got)
	}
	want := []string{StepCompensated, StepCompleted, StepFailed, StepPending}
	for i, s := range st.Steps {
		if s.Status != want[i] {
			t.Errorf("step %d: got %s, want %s", i, s.Status, want[i])
		}
	}
}

func TestCompensationDeadLettersAfterThreeAttemptsAndRetries(t *testing.T) {
	def, st := testSaga(t)
	st, _ = step(t, def, st, 0, Emit)
	st, _ = step(t, def, st, 0, Emit)
	st, _ = step(t, def, st, 0, Emit)
	st = Matched(st, "was_finished", []byte(`{"code":"x"}`), 1)
	act := Next(def, st, 2)
	st = EmitFailed(st, act, &Error{Message: "emit_failed", Type: "validation_error"}, 2)
	if !st.Compensating || st.Error.Step != "d" {
		t.Fatalf("got %+v, want compensation after d failed", st)
	}
	act = Next(def, st, 3)
	if act.Kind != Compensate || act.Step != 2 {
		t.Fatalf("got action %d on step %d, want compensation of c first", act.Kind, act.Step)
	}
	if got := render(t, act.Emit, st); got != `{"of":"x"}` {
		t.Errorf("compensation reads $context: got %s", got)
	}
	for i := 1; i <= MaxCompensationAttempts; i++ {
		act = Next(def, st, 3)
		st = EmitFailed(st, act, &Error{Message: "emit_failed", Type: "validation_error"}, 3)
		if wantDead := i == MaxCompensationAttempts; (st.Status == DeadLettered) != wantDead {
			t.Fatalf("attempt %d: got status %s", i, st.Status)
		}
	}
	st, err := Retry(st)
	if err != nil || st.Status != Running || st.Attempts != 0 {
		t.Fatalf("retry of a dead letter: got %v %+v", err, st)
	}
	if act = Next(def, st, 4); act.Kind != Compensate || act.Step != 2 {
		t.Fatalf("after retry: got action %d on step %d, want compensation of c", act.Kind, act.Step)
	}
	if _, err := Retry(st); !errors.Is(err, ErrNotRetryable) {
		t.Fatalf("retry of a running saga: got %v, want ErrNotRetryable", err)
	}
}

func TestRetryRestartsFromFailedStep(t *testing.T) {
	def, st := testSaga(t)
	st, _ = step(t, def, st, 0, Emit)
	act := Next(def, st, 0)
	st = EmitFailed(st, act, &Error{Message: "emit_failed", Type: "validation_error"}, 0)
	st, _ = step(t, def, st, 0, Compensate)
	st, _ = step(t, def, st, 0, Finish)
	st, err := Retry(st)
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != 1 || st.Steps[0].Status != StepCompleted || st.Steps[1].Status != StepPending || st.Error != nil {
		t.Fatalf("got %+v, want a restart at b with a completed", st)
	}
	if act := Next(def, st, 0); act.Kind != Emit || act.Step != 1 {
		t.Fatalf("got action %d on step %d, want b's emit", act.Kind, act.Step)
	}
}

func TestRenderRefusesBadIDAndData(t *testing.T) {
	sc := &tick.Scope{Event: &tick.Event{Data: tick.Object(tick.Member{Key: "id", Value: tick.Number(1.5)}, tick.Member{Key: "list", Value: tick.Array()})}}
	cases := []struct {
		name, id, data, path string
	}{
		{"missing id", `"$.data.nope"`, `{}`, "id"},
		{"array data", `"$.data.id"`, `"$.data.list"`, "data"},
		{"missing field", `"$.data.id"`, `{"x": "$.data.nope"}`, "data.x"},
	}
	for _, c := range cases {
		id, err := tick.CompileTemplate([]byte(c.id), tick.TemplateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := tick.CompileTemplate([]byte(c.data), tick.TemplateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Render(&spec.Emit{AggregateType: "job", EventType: "x", ID: id, Data: data}, sc)
		var re *RenderError
		if !errors.As(err, &re) || re.Path != c.path || !errors.Is(err, ErrTemplate) {
			t.Errorf("%s: got %v, want a RenderError at %s", c.name, err, c.path)
		}
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	def, st := testSaga(t)
	st, _ = step(t, def, st, 0, Emit)
	st.Error = &Error{Message: "m", Type: "t", Detail: "d", Path: "p", Step: "a"}
	got, err := Decode(st.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Fatalf("got %+v, want %+v", got, st)
	}
	if _, err := Decode([]byte(`{"saga_id":"x","current":9,"steps":[]}`)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
}

func TestIndex(t *testing.T) {
	var x Index
	k := Key{Type: "job", ID: "global"}
	x.Add(k, "b")
	x.Add(k, "a")
	x.Add(Key{Type: "job", ID: "other"}, "c")
	if got := x.Lookup(k); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("got %v, want [a b]", got)
	}
	x.Remove(k, "a")
	x.Remove(k, "b")
	if got := x.Lookup(k); len(got) != 0 {
		t.Fatalf("got %v after removal, want none", got)
	}
}
