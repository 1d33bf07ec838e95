package soak

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
)

func ev(id, data string) Event { return Event{StreamID: id, Data: json.RawMessage(data)} }

func ack(id, data string) Acked { return Acked{StreamID: id, Data: json.RawMessage(data)} }

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
		err := CheckStream(s, c.acked, c.got)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
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
		err := CheckImplied(c.want, got, "order_id")
		if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.err)
		}
	}
}

func TestLedgerSnapshotIsACopy(t *testing.T) {
	l := NewLedger()
	s := Stream{Type: "user", ID: "u1"}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Ack(s, ack("1-0", `{}`))
			l.AckImplied("order:a")
		}()
	}
	wg.Wait()
	streams, implied := l.Snapshot()
	l.Ack(s, ack("2-0", `{}`))
	l.AckImplied("order:a")
	if len(streams[s]) != 8 || implied["order:a"] != 8 {
		t.Errorf("got %d events and %d implied in the snapshot, want 8 and 8", len(streams[s]), implied["order:a"])
	}
}
