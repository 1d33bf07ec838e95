package soak

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func ev(id, data string) Event { return Event{StreamID: id, Data: json.RawMessage(data)} }

func ack(id, data string) Acked { return Acked{StreamID: id, Data: json.RawMessage(data)} }

// wantErr checks that a check of case name returned want (nil, or an error that wraps it).
func wantErr(t *testing.T, name string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) || (want == nil) != (err == nil) {
		t.Errorf("%s: got %v, want %v", name, err, want)
	}
}

func TestCheckStream(t *testing.T) {
	s := Stream{Type: "user", ID: "u1"}
	cases := []struct {
		name  string
		acked []Acked
		got   []Event
		want  error
	}{
		{"all present", []Acked{ack("1-0", `{"n":"a"}`), ack("2-0", `{"n":"b"}`)}, []Event{ev("1-0", `{"n":"a"}`), ev("2-0", `{"n":"b"}`)}, nil},
		{"unacknowledged extra is allowed", []Acked{ack("1-0", `{"n":"a"}`)}, []Event{ev("1-0", `{"n":"a"}`), ev("2-0", `{"n":"b"}`)}, nil},
		{"key order does not matter", []Acked{ack("1-0", `{"n":"a","x":[1,2]}`)}, []Event{ev("1-0", `{"x":[1,2], "n":"a"}`)}, nil},
		{"missing event", []Acked{ack("1-0", `{"n":"a"}`), ack("2-0", `{"n":"b"}`)}, []Event{ev("1-0", `{"n":"a"}`)}, ErrLost},
		{"empty stream", []Acked{ack("1-0", `{"n":"a"}`)}, nil, ErrLost},
		{"changed data", []Acked{ack("1-0", `{"n":"a","name":"x"}`)}, []Event{ev("1-0", `{"n":"a","name":"y"}`)}, ErrLost},
		{"nonce twice", []Acked{ack("1-0", `{"n":"a"}`)}, []Event{ev("1-0", `{"n":"a"}`), ev("2-0", `{"n":"a"}`)}, ErrDuplicate},
		{"nothing acknowledged", nil, []Event{ev("1-0", `{}`), ev("2-0", `[]`)}, nil},
	}
	for _, c := range cases {
		wantErr(t, c.name, CheckStream(s, c.acked, c.got), c.want)
	}
}

func TestCheckImplied(t *testing.T) {
	got := []Event{ev("1-0", `{"order_id":"order:a"}`), ev("2-0", `{"order_id":"order:a"}`), ev("3-0", `{"order_id":"order:b"}`), ev("4-0", `{}`)}
	cases := []struct {
		name string
		want map[string]int
		err  error
	}{
		{"exact counts", map[string]int{"order:a": 2, "order:b": 1}, nil},
		{"more implied than acknowledged", map[string]int{"order:a": 1}, nil},
		{"fewer implied than acknowledged", map[string]int{"order:b": 2}, ErrLost},
		{"reference never implied", map[string]int{"order:c": 1}, ErrLost},
	}
	for _, c := range cases {
		wantErr(t, c.name, CheckImplied(c.want, got, "order_id"), c.err)
	}
}

func TestLedgerSnapshotIsACopy(t *testing.T) {
	l := NewLedger()
	s, to := Stream{Type: "user", ID: "u1"}, Stream{Type: "reminder", ID: "r1"}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Ack(s, ack("1-0", `{}`))
			l.AckImplied("order:a")
			l.AckScheduled(to, "n")
			l.AckSaga("c")
		}()
	}
	wg.Wait()
	a := l.Snapshot()
	l.Ack(s, ack("2-0", `{}`))
	l.AckImplied("order:a")
	l.AckScheduled(to, "n")
	l.AckSaga("c")
	if len(a.Streams[s]) != 8 || a.Implied["order:a"] != 8 || len(a.Scheduled[to]) != 8 || len(a.Sagas) != 8 {
		t.Errorf("got %d events, %d implied, %d scheduled and %d sagas in the snapshot, want 8 of each",
			len(a.Streams[s]), a.Implied["order:a"], len(a.Scheduled[to]), len(a.Sagas))
	}
}

// refCase is a case of the checks of reactive work: the references acknowledged, the events
// read back, whether the work has settled, and the error wanted.
type refCase struct {
	name    string
	want    []string
	got     []Event
	settled bool
	err     error
}

func tev(id, typ, data string) Event {
	return Event{StreamID: id, Type: typ, Data: json.RawMessage(data)}
}

func TestCheckScheduled(t *testing.T) {
	s := Stream{Type: "reminder", ID: "r1"}
	cases := []refCase{
		{"each fired once", []string{"a", "b"}, []Event{ev("1-0", `{"placement":"a"}`), ev("2-0", `{"placement":"b"}`)}, true, nil},
		{"not yet fired, before settling", []string{"a", "b"}, []Event{ev("1-0", `{"placement":"a"}`)}, false, nil},
		{"never fired", []string{"a", "b"}, []Event{ev("1-0", `{"placement":"a"}`)}, true, ErrLost},
		{"none fired", []string{"a"}, nil, true, ErrLost},
		{"fired twice", []string{"a"}, []Event{ev("1-0", `{"placement":"a"}`), ev("2-0", `{"placement":"a"}`)}, false, ErrDuplicate},
		{"unacknowledged fired twice", nil, []Event{ev("1-0", `{"placement":"x"}`), ev("2-0", `{"placement":"x"}`)}, false, ErrDuplicate},
		{"unacknowledged fired once", []string{"a"}, []Event{ev("1-0", `{"placement":"a"}`), ev("2-0", `{"placement":"x"}`)}, true, nil},
	}
	for _, c := range cases {
		wantErr(t, c.name, CheckScheduled(s, c.want, c.got, "placement", c.settled), c.err)
	}
}

func TestCheckSagas(t *testing.T) {
	types := []string{"confirmation_sent", "checkout_completed"}
	both := func(id string, at int) []Event {
		return []Event{tev(fmt.Sprintf("%d-0", at), "confirmation_sent", `{"checkout":"`+id+`"}`), tev(fmt.Sprintf("%d-0", at+1), "checkout_completed", `{"checkout":"`+id+`"}`)}
	}
	cases := []refCase{
		{"each saga reported once", []string{"a", "b"}, append(both("a", 1), both("b", 3)...), true, nil},
		{"one still running, before settling", []string{"a", "b"}, both("a", 1), false, nil},
		{"one never completed", []string{"a", "b"}, append(both("a", 1), tev("3-0", "confirmation_sent", `{"checkout":"b"}`)), true, ErrLost},
		{"a step emitted twice", []string{"a"}, append(both("a", 1), tev("3-0", "confirmation_sent", `{"checkout":"a"}`)), false, ErrDuplicate},
		{"an unacknowledged saga completed twice", nil, append(both("x", 1), tev("3-0", "checkout_completed", `{"checkout":"x"}`)), false, ErrDuplicate},
		{"other types are not counted", []string{"a"}, append(both("a", 1), tev("3-0", "was_charged", `{"checkout":"a"}`)), true, nil},
	}
	for _, c := range cases {
		wantErr(t, c.name, CheckSagas(c.want, c.got, "checkout", types, c.settled), c.err)
	}
}
