package read

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/tick"
)

func handlers(t testing.TB) map[string]*tick.Handler {
	t.Helper()
	inc, err := tick.CompileHandler([]byte(`[{"increment":{"target":"count"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := tick.CompileHandler([]byte(`[{"set":{"target":"last","value":"$.data.n"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*tick.Handler{"was_incremented": inc, "was_set": set}
}

var k = storage.StreamKey{Type: "counter", ID: "global"}

func fill(t testing.TB, n int) *storage.Store {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "s"), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for i := 1; i <= n; i++ {
		typ := "was_incremented"
		if i%3 == 0 {
			typ = "was_set"
		}
		if i%5 == 0 {
			typ = "was_ignored" // no handler: counted, skipped
		}
		ts := int64(i * 10)
		_, err := st.Commit(&storage.Record{Appends: []storage.Append{{Stream: k, Expect: storage.Expect{Kind: storage.Skip}, Events: []storage.NewEvent{{
			Type: typ, Data: []byte(`{"n":` + strconv.Itoa(i) + `}`), Metadata: []byte(`{"timestamp":` + strconv.FormatInt(ts, 10) + `}`), Timestamp: ts,
		}}}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestFoldWholeAndInParts(t *testing.T) {
	st := fill(t, 10)
	h := handlers(t)
	whole, err := Fold(st, k, h, tick.Value{}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	part, err := Fold(st, k, h, tick.Value{}, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := Fold(st, k, h, part, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	if whole.String() != rest.String() {
		t.Errorf("folding in two parts gave %s, want %s", rest, whole)
	}
	if got := whole.Get("count").Num(); got != 5 {
		t.Errorf("count %v, want 5 (events 1,2,4,7,8)", got)
	}
	if got := whole.Get("last").Num(); got != 9 {
		t.Errorf("last %v, want 9", got)
	}
	if got := part.Get("count").Num(); got != 3 {
		t.Errorf("the first state changed to count %v after folding on from it, want 3", got)
	}
}

func TestFoldAt(t *testing.T) {
	st := fill(t, 10)
	res, err := FoldAt(st, k, handlers(t), 10, 45)
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta != (Meta{Length: 4, CreatedAt: 10, UpdatedAt: 40}) || res.State.Get("count").Num() != 3 {
		t.Errorf("at 45: meta %+v state %s; want 4 events from 10 to 40, count 3", res.Meta, res.State)
	}
	none, err := FoldAt(st, k, handlers(t), 10, 5)
	if err != nil || none.Meta.Length != 0 {
		t.Errorf("before every event: %+v %v", none.Meta, err)
	}
}

func TestAnswers(t *testing.T) {
	ev := storage.Event{Stream: k, StreamID: storage.StreamID{Ms: 7, Seq: 1}, Type: "was_set", Data: []byte(`{"n":1}`), Metadata: []byte(`{"timestamp":3}`)}
	cases := []struct{ got, want string }{
		{string(AppendAggregate(nil, []byte(`{"a":1}`), Meta{Length: 2, CreatedAt: 1, UpdatedAt: 3})), `{"ok":true,"data":{"a":1},"metadata":{"length":2,"created_at":1,"updated_at":3}}`},
		{string(AppendAggregate(nil, []byte(`{}`), Meta{})), `{"ok":true,"data":{},"metadata":{"length":0}}`},
		{string(AppendEvents(nil, []storage.Event{ev})), `{"ok":true,"events":[{"stream_id":"7-1","key":"counter:global","type":"was_set","data":{"n":1},"metadata":{"timestamp":3}}]}`},
		{string(AppendLength(nil, 9)), `{"ok":true,"length":9}`},
		{string(AppendIDs(nil, []string{"a", "b"}, "b")), `{"ok":true,"data":["a","b"],"cursor":"b"}`},
		{string(AppendIDs(nil, nil, "")), `{"ok":true,"data":[]}`},
		{string(AppendList(nil, [][]byte{AppendResolved(nil, "x", []byte(`{}`), Meta{Length: 1, CreatedAt: 2, UpdatedAt: 2})}, "")), `{"ok":true,"data":[{"id":"x","data":{},"metadata":{"length":1,"created_at":2,"updated_at":2}}]}`},
		{string(AppendState(nil, tick.Value{})), `{}`},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %s, want %s", i, c.got, c.want)
		}
	}
}
