package schedule

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/storage"
)

var src = storage.StreamKey{Type: "cart", ID: "a0000000-0000-4000-a000-000000000001"}

func rec(id string, fireAt int64, cancel ...implication.Match) *Record {
	return &Record{ID: id, AggregateType: "n", AggregateID: "x", EventType: "e", Data: []byte(`{}`), FireAt: fireAt,
		SourceType: src.Type, SourceID: src.ID, CancelOn: cancel}
}

func TestDueIsEarliestFirstAndOnlyPending(t *testing.T) {
	x := NewIndex()
	for i, at := range []int64{50, 10, 30, 20, 40} {
		x.Add(rec(fmt.Sprintf("id%d", i), at))
	}
	x.Settle("id3", Canceled) // fire time 20
	if got, want := x.Due(35), []string{"id1", "id2"}; !slices.Equal(got, want) {
		t.Fatalf("got due %v, want %v", got, want)
	}
	if got := x.Due(35); len(got) != 0 {
		t.Fatalf("got due %v again, want none (taken off the heap)", got)
	}
	x.Retry("id1")
	x.Settle("id2", Fired)
	if got, want := x.Due(100), []string{"id1", "id4", "id0"}; !slices.Equal(got, want) {
		t.Fatalf("got due %v, want %v", got, want)
	}
	if got := x.Pending(); got != 3 {
		t.Errorf("got %d pending, want 3 (id0, id1, id4 are still pending while firing)", got)
	}
}

func TestCancelTableFollowsStatus(t *testing.T) {
	x := NewIndex()
	m := implication.Match{AggregateType: "cart", ID: src.ID, EventType: "was_checked_out"}
	x.Add(rec("a", 10, m))
	x.Add(rec("b", 20, m))
	if got := x.Canceled(src, "was_checked_out"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("got %v, want [a b]", got)
	}
	if got := x.Canceled(src, "other"); len(got) != 0 {
		t.Fatalf("got %v for another event type, want none", got)
	}
	x.Settle("a", Canceled)
	x.Bury("b")
	if x.HasCancels() {
		t.Errorf("a canceled and a dead schedule still watch for events")
	}
	x.Revive("b")
	if got := x.Canceled(src, "was_checked_out"); !slices.Equal(got, []string{"b"}) {
		t.Errorf("got %v after retry, want [b]", got)
	}
	if got := x.Status("b"); got != Pending {
		t.Errorf("got status %q, want pending", got)
	}
}

func TestReservePerAggregate(t *testing.T) {
	x := NewIndex()
	for i := 0; i < MaxPerAggregate-1; i++ {
		x.Add(rec(fmt.Sprintf("id%03d", i), 1))
	}
	held, err := x.Reserve(map[storage.StreamKey]int{src: 1})
	if err != nil {
		t.Fatalf("no room for the 100th schedule: %v", err)
	}
	var le *LimitError
	if _, err := x.Reserve(map[storage.StreamKey]int{src: 1}); !errors.As(err, &le) || le.PerPair || le.Source != src {
		t.Errorf("got %v with the last place held, want a per-aggregate LimitError", err)
	}
	held.Release()
	again, err := x.Reserve(map[storage.StreamKey]int{src: 1})
	if err != nil {
		t.Fatalf("released room is still held: %v", err)
	}
	again.Commit([]*Record{rec("id999", 1)})
	again.Release() // spent: gives nothing back twice
	if _, err := x.Reserve(map[storage.StreamKey]int{src: 1}); !errors.Is(err, ErrLimit) {
		t.Errorf("got %v for the 101st schedule of one aggregate, want ErrLimit", err)
	}
	if got := x.Pending(); got != MaxPerAggregate {
		t.Errorf("got %d pending, want %d", got, MaxPerAggregate)
	}
	x.Settle("id000", Fired)
	if r, err := x.Reserve(map[storage.StreamKey]int{src: 1}); err != nil {
		t.Errorf("a fired schedule still counts against its aggregate: %v", err)
	} else {
		r.Release()
	}
}

func TestLoadStatusPrecedence(t *testing.T) {
	st, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dead := rec("dead", 1)
	dead.Dead = true
	var puts []storage.Put
	for _, r := range []*Record{rec("pending", 1), rec("fired", 1), rec("canceled", 1), rec("both", 1), dead} {
		puts = append(puts, storage.Put{Space: Space, Key: RecordKey(r.ID), Value: r.Encode()})
	}
	m := Marker{At: time.Now().UnixMilli()}.Encode()
	puts = append(puts,
		storage.Put{Space: Space, Key: FiredKey("fired"), Value: m},
		storage.Put{Space: Space, Key: CanceledKey("canceled"), Value: m},
		storage.Put{Space: Space, Key: CanceledKey("both"), Value: m},
		storage.Put{Space: Space, Key: FiredKey("both"), Value: m},
	)
	if _, err := st.Commit(&storage.Record{Puts: puts}); err != nil {
		t.Fatal(err)
	}
	x, err := Load(st)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"pending": Pending, "fired": Fired, "canceled": Canceled, "both": Fired, "dead": DeadLetter} {
		if got := x.Status(id); got != want {
			t.Errorf("%s: got status %q, want %q", id, got, want)
		}
	}
	if got := x.Due(10); !slices.Equal(got, []string{"pending"}) {
		t.Errorf("got due %v, want [pending]", got)
	}
	if ids, total := x.List("", 2, 1); total != 5 || !slices.Equal(ids, []string{"canceled", "dead"}) {
		t.Errorf("got page %v of %d, want [canceled dead] of 5", ids, total)
	}
}
