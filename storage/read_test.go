package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

func TestEventsCursorSemantics(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	k := key("order", "ord_123")
	var ids []StreamID
	var between StreamID
	for i := 0; i < 7; i++ {
		ids = append(ids, mustAppend(t, s, k, ev("e", i)).StreamIDs...)
		if i == 3 {
			// Another stream's id falls between events 4 and 5 of this one.
			between = mustAppend(t, s, key("order", "other"), ev("e", 0)).StreamIDs[0]
		}
	}
	cases := []struct {
		name      string
		after     StreamID
		count     int
		wantIndex []uint64
	}{
		{"from-start", StreamID{}, 3, []uint64{1, 2, 3}},
		{"exclusive-cursor", ids[2], 3, []uint64{4, 5, 6}},
		{"short-last-page", ids[5], 3, []uint64{7}},
		{"at-end", ids[6], 3, nil},
		{"cursor-between-ids", between, 100, []uint64{5, 6, 7}},
		{"cursor-before-everything", StreamID{Ms: 1}, 2, []uint64{1, 2}},
		{"zero-count", StreamID{}, 0, nil},
	}
	for _, c := range cases {
		evs, err := s.Events(k, c.after, c.count)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, e := range evs {
			got = append(got, e.Index)
		}
		if !reflect.DeepEqual(got, c.wantIndex) {
			t.Errorf("%s: got indexes %v, want %v", c.name, got, c.wantIndex)
		}
	}
}

func TestListByteOrderExclusiveCursor(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	ids := []string{"global", "550e8400-e29b-41d4-a716-446655440000", "b", "a", "ab"}
	for _, id := range ids {
		mustAppend(t, s, key("order", id), ev("e", 1))
	}
	mustAppend(t, s, key("orders", "zzz"), ev("e", 1)) // a type sharing a prefix
	cases := []struct {
		name   string
		cursor string
		limit  int
		want   []string
	}{
		{"first-page", "", 2, []string{"550e8400-e29b-41d4-a716-446655440000", "a"}},
		{"next-page", "a", 2, []string{"ab", "b"}},
		{"last-page", "b", 2, []string{"global"}},
		{"past-end", "global", 2, nil},
		{"all", "", 10, []string{"550e8400-e29b-41d4-a716-446655440000", "a", "ab", "b", "global"}},
	}
	for _, c := range cases {
		got, err := s.List("order", c.cursor, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRecordSpace(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	put := func(k, v string) {
		if _, err := s.Commit(&Record{Puts: []Put{{Space: "idem", Key: k, Value: []byte(v)}}}); err != nil {
			t.Fatal(err)
		}
	}
	put("a/1", "x")
	put("a/2", "y")
	put("b/1", "z")
	put("a/1", "x2")
	if _, err := s.Commit(&Record{Deletes: []Delete{{Space: "idem", Key: "a/2"}}}); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get("idem", "a/1"); err != nil || string(v) != "x2" {
		t.Fatalf("get a/1: got %q, %v; want x2", v, err)
	}
	if _, err := s.Get("idem", "a/2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get deleted: got %v, want ErrNotFound", err)
	}
	if _, err := s.Get("other", "a/1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get in another space: got %v, want ErrNotFound", err)
	}
	var got []string
	if err := s.Scan("idem", "a/", func(k string, v []byte) error { got = append(got, k+"="+string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/1=x2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("scan: got %v, want %v", got, want)
	}
}

// ScanPage visits, page by page, exactly what Scan visits, whether a key's newest version is in
// bbolt or still in the overlay, and whether that version is a put or a delete.
func TestScanPageEqualsScan(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	commit := func(r *Record) uint64 {
		if _, err := s.Commit(r); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.mu.lsn
	}
	for i := 0; i < 40; i++ {
		commit(&Record{Puts: []Put{{Space: "sp", Key: fmt.Sprintf("k%02d", i), Value: []byte("v1")}}})
	}
	commit(&Record{Puts: []Put{{Space: "other", Key: "k00", Value: []byte("elsewhere")}}})
	if err := s.flush(commit(&Record{Deletes: []Delete{{Space: "sp", Key: "k03"}}})); err != nil {
		t.Fatal(err)
	}
	// Newer versions, not yet indexed: overwrites, deletions, and keys bbolt has never seen.
	for i := 0; i < 40; i += 5 {
		commit(&Record{Puts: []Put{{Space: "sp", Key: fmt.Sprintf("k%02d", i), Value: []byte("v2")}}})
		commit(&Record{Deletes: []Delete{{Space: "sp", Key: fmt.Sprintf("k%02d", i+1)}}})
		commit(&Record{Puts: []Put{{Space: "sp", Key: fmt.Sprintf("k%02d+", i), Value: []byte("new")}}})
	}
	collect := func(into *[]string) func(string, []byte) error {
		return func(k string, v []byte) error { *into = append(*into, k+"="+string(v)); return nil }
	}
	for _, prefix := range []string{"", "k1", "k05"} {
		var want []string
		if err := s.Scan("sp", prefix, collect(&want)); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{1, 3, 7, 100} {
			var got []string
			after := ""
			for {
				last, n, err := s.ScanPage("sp", prefix, after, limit, collect(&got))
				if err != nil {
					t.Fatal(err)
				}
				if n < limit {
					break
				}
				after = last
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("prefix %q, pages of %d:\n got %v\nwant %v", prefix, limit, got, want)
			}
		}
	}
	var all []string
	if err := s.Scan("sp", "", collect(&all)); err != nil {
		t.Fatal(err)
	}
	// 40 keys, k03 deleted in bbolt, eight deleted in the overlay, eight new in the overlay.
	if want := []string{"k00=v2", "k00+=new", "k02=v1", "k04=v1", "k05=v2"}; len(all) != 39 || !reflect.DeepEqual(all[:5], want) {
		t.Fatalf("scan: %d keys, starting %v; want 39 starting %v", len(all), all[:min(5, len(all))], want)
	}
	if _, _, err := s.ScanPage("sp", "", "", 0, collect(&all)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("page limit 0: got %v, want ErrInvalid", err)
	}
}

func TestReadsSeeCommitsBeforeAndAfterIndexing(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	k := key("t", "x")
	for i := 1; i <= 300; i++ {
		mustAppend(t, s, k, ev("e", i))
		// Read-your-writes, whether the record is still in the overlay or already in bbolt.
		if n := mustLength(t, s, k); n != uint64(i) {
			t.Fatalf("after commit %d: length %d", i, n)
		}
		if i%50 == 0 {
			if got := len(allEvents(t, s, k)); got != i {
				t.Fatalf("after commit %d: %d events", i, got)
			}
		}
	}
}

func TestIndexDeletedGivesSameAnswers(t *testing.T) {
	opts := testOptions()
	s, dir := openChecked(t, opts)
	for i := 0; i < 40; i++ {
		mustAppend(t, s, key("t", fmt.Sprintf("s%d", i%7)), ev("e", i))
	}
	answers := func(s *Store) string {
		out := ""
		ids, err := s.List("t", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			info, _ := s.Info(key("t", id))
			out += fmt.Sprintf("%s %+v\n", id, info)
			for _, e := range allEvents(t, s, key("t", id)) {
				out += fmt.Sprintf(" %d %s %s %x\n", e.Index, e.StreamID, dataOf(e), e.Hash)
			}
		}
		return out
	}
	before := answers(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Rebuild(dir, opts); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := answers(s2); got != before {
		t.Fatalf("answers after rebuild differ:\n%s\nwant\n%s", got, before)
	}
	s2.Close()
}

func TestCorruptLogRefusesToOpen(t *testing.T) {
	opts := testOptions()
	opts.SegmentSize = 4 << 10
	opts.CompressThreshold = -1
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		mustAppend(t, s, key("t", "x"), ev("e", map[string]any{"marker": "corrupt-me", "i": i}))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	segs, err := filepath.Glob(filepath.Join(dir, "log", "*.seg"))
	if err != nil || len(segs) < 2 {
		t.Fatalf("want several segments, got %v (%v)", segs, err)
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("corrupt-me"))
	b[i] ^= 0xff
	if err := os.WriteFile(segs[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "index.db"))
	if _, err := Open(dir, opts); !wal.IsCorruption(err) {
		t.Fatalf("got %v, want a corruption error", err)
	}
}

func TestIndexAheadOfCutLogIsRebuilt(t *testing.T) {
	opts := testOptions()
	opts.CompressThreshold = -1
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	k := key("t", "x")
	for i := 0; i < 10; i++ {
		mustAppend(t, s, k, ev("e", map[string]any{"i": i, "tail": fmt.Sprintf("cut-here-%d", i)}))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Cut the log inside the 8th record, as `j17 repair` or a lost tail would.
	segs, _ := filepath.Glob(filepath.Join(dir, "log", "*.seg"))
	last := segs[len(segs)-1]
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(last, b[:bytes.Index(b, []byte("cut-here-7"))], 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := mustLength(t, s2, k); n != 7 {
		t.Fatalf("length after the cut: got %d, want 7", n)
	}
	res := mustAppend(t, s2, k, ev("e", 1))
	if res.Lengths[0] != 8 {
		t.Fatalf("next append: got length %d, want 8", res.Lengths[0])
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, opts); err != nil {
		t.Fatal(err)
	}
}

// An index written by an earlier format is rebuilt at open, and Check names the format instead of
// reporting a mismatch in some bucket.
func TestOlderIndexFormatIsRebuilt(t *testing.T) {
	opts := testOptions()
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		mustAppend(t, s, key("t", fmt.Sprintf("s%d", i%3)), ev("e", i))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Format 1 recorded no format and listed ids in a bucket of their own.
	updateIndex(t, dir, func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucket([]byte("types")); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Delete(metaFormatKey)
	})
	if err := Check(dir, opts); !errors.Is(err, ErrIndexMismatch) || !strings.Contains(err.Error(), "format 1") {
		t.Fatalf("check of a format-1 index: got %v, want ErrIndexMismatch naming format 1", err)
	}

	s2, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := s2.List("t", "", 10)
	if err != nil || strings.Join(ids, ",") != "s0,s1,s2" {
		t.Fatalf("list after the rebuild: %v %v", ids, err)
	}
	if n := mustLength(t, s2, key("t", "s0")); n != 7 {
		t.Fatalf("length after the rebuild: got %d, want 7", n)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, opts); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, "index.db"), 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("types")) != nil {
			return errors.New("the format-1 listing bucket survived the rebuild")
		}
		if f := formatOf(tx); f != indexFormat {
			return fmt.Errorf("format after the rebuild: %d", f)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestRangeLooksUpPositionsAgainAfterCompaction compacts, between Range's lookup of a chunk's
// record positions and its reads, the segments that hold the stream's records: the reads must
// not use the positions from before.
func TestRangeLooksUpPositionsAgainAfterCompaction(t *testing.T) {
	opts := testOptions()
	opts.SegmentSize = 16 << 10
	opts.CacheBytes = -1 // every event is read from the log
	s, _ := openChecked(t, opts)
	kept, erased := key("order", "kept"), key("order", "erased")
	const n = 200
	for i := 0; i < n; i++ {
		// Records of the two streams alternate, so erasing one moves the other's in every segment.
		mustAppend(t, s, kept, ev("was_noted", map[string]any{"i": i}))
		mustAppend(t, s, erased, ev("was_noted", map[string]any{"secret": i}))
	}
	before := allEvents(t, s, kept)
	rewrites := rewriteOnceAt(t, s, erased, "hinted")
	after := allEvents(t, s, kept)
	s.stepHook = nil
	if *rewrites != 1 || s.compactions == 0 {
		t.Fatalf("rewrites %d, compactions %d: the test moved no records", *rewrites, s.compactions)
	}
	if len(after) != n {
		t.Fatalf("got %d events, want %d", len(after), n)
	}
	for i := range after {
		if after[i].Index != before[i].Index || after[i].Hash != before[i].Hash || !bytes.Equal(after[i].Data, before[i].Data) {
			t.Fatalf("event %d read after the compaction: %+v, want %+v", i+1, after[i], before[i])
		}
	}
}

// A rewrite that runs while Range reads the very stream it rewrites drops the records Range's
// index entries point to. Range then reads the entries again and goes on with the rewritten
// events, instead of failing with a record that is not found.
func TestRangeFollowsARewriteOfTheStreamItReads(t *testing.T) {
	opts := testOptions()
	opts.SegmentSize = 16 << 10
	opts.CacheBytes = -1 // every event is read from the log
	s, _ := openChecked(t, opts)
	k := key("order", "erased")
	const n = 200
	for i := 0; i < n; i++ {
		mustAppend(t, s, k, ev("was_noted", map[string]any{"secret": i}))
	}
	rewrites := rewriteOnceAt(t, s, k, "hinted")
	got := allEvents(t, s, k)
	s.stepHook = nil
	if *rewrites != 1 {
		t.Fatalf("rewrites %d: the test rewrote nothing", *rewrites)
	}
	want := allEvents(t, s, k)
	if len(got) != n || len(want) != n {
		t.Fatalf("got %d events, then %d; want %d", len(got), len(want), n)
	}
	// The hook ran before the first record was read, so every event comes from the rewrite.
	for i := range got {
		if got[i].Index != want[i].Index || got[i].Hash != want[i].Hash || got[i].Type != "_was_tombstoned" {
			t.Fatalf("event %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
}

// Event, like Range, reads the index entry again when a rewrite dropped its record meanwhile.
func TestEventFollowsARewriteOfItsStream(t *testing.T) {
	opts := testOptions()
	opts.CacheBytes = -1
	s, _ := openChecked(t, opts)
	k := key("order", "erased")
	mustAppend(t, s, k, ev("was_noted", map[string]any{"secret": 1}))
	rewrites := rewriteOnceAt(t, s, k, "entry")
	got, err := s.Event(k, 1)
	s.stepHook = nil
	if err != nil {
		t.Fatal(err)
	}
	if *rewrites != 1 || got.Type != "_was_tombstoned" {
		t.Fatalf("rewrites %d, event %+v: want the rewritten event", *rewrites, got)
	}
}

// rewriteOnceAt makes s rewrite stream k into tombstones the first time it reaches step (see
// Store.stepHook), and returns the count of rewrites it ran. The caller resets s.stepHook.
func rewriteOnceAt(t *testing.T, s *Store, k StreamKey, step string) *int {
	rewrites := new(int)
	s.stepHook = func(at string) {
		if at != step || *rewrites > 0 {
			return
		}
		*rewrites++
		if _, err := s.Rewrite(k, func(e Event) (NewEvent, error) { return ev("_was_tombstoned", map[string]any{}), nil }); err != nil {
			t.Error(err)
		}
	}
	return rewrites
}

// TestStreamOfOneEventKeepsItsEntryInItsHead: the index keeps a stream's only event in the
// stream's head, not in the events bucket; its second event moves it there (or to the tails),
// whether it comes in the same append, a later record of the same index transaction or a later
// transaction. A carry (a rewrite of another stream re-appending the record that held the event)
// replaces the entry in the head. Reads before and after reopening, and Check's rebuild, agree.
func TestStreamOfOneEventKeepsItsEntryInItsHead(t *testing.T) {
	opts := testOptions()
	s, dir := openChecked(t, opts)
	one, carried, pair := key("t", "one"), key("t", "carried"), key("t", "pair")
	sameTx, laterTx, alice := key("t", "same-tx"), key("t", "later-tx"), key("user", "alice")
	mustAppend(t, s, one, ev("e", "one 1"))
	mustAppend(t, s, pair, ev("e", "pair 1"), ev("e", "pair 2"))
	mustAppend(t, s, laterTx, ev("e", "later 1"))
	if _, err := s.Commit(&Record{Appends: []Append{
		{Stream: alice, Events: []NewEvent{ev("e", map[string]any{"email": secret})}},
		{Stream: carried, Events: []NewEvent{ev("e", "carried 1")}},
	}}); err != nil {
		t.Fatal(err)
	}
	flushCommitted(t, s)
	mustAppend(t, s, sameTx, ev("e", "same 1"))
	mustAppend(t, s, sameTx, ev("e", "same 2"))
	mustAppend(t, s, laterTx, ev("e", "later 2"))
	if _, err := s.Rewrite(alice, tombstone); err != nil {
		t.Fatal(err)
	}
	want := map[StreamKey][]string{
		one: {"one 1"}, carried: {"carried 1"}, pair: {"pair 1", "pair 2"},
		sameTx: {"same 1", "same 2"}, laterTx: {"later 1", "later 2"},
	}
	reads := func(s *Store) {
		t.Helper()
		for k, texts := range want {
			got := allEvents(t, s, k)
			if len(got) != len(texts) {
				t.Fatalf("%s: %d events, want %d", k, len(got), len(texts))
			}
			for i, e := range got {
				if d := dataOf(e); d != fmt.Sprintf("e %q", texts[i]) {
					t.Errorf("%s event %d: %s, want %q", k, i+1, d, texts[i])
				}
			}
		}
	}
	reads(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	lengths := map[string]uint64{}
	entries := map[string]int{}
	db, err := bolt.Open(filepath.Join(dir, "index.db"), 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		names := map[uint64]string{}
		if err := forEachHead(tx, 1, func(no uint64, v []byte) error {
			var h head
			if err := h.unmarshal(u64Key(no), v); err != nil {
				return err
			}
			names[h.no] = string(headKey(v))
			lengths[names[h.no]] = h.Length
			return nil
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketEvents).ForEach(func(k, v []byte) error {
			entries[names[binary.BigEndian.Uint64(k)]] += len(v) / entrySize
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket(bucketTails).ForEach(func(k, v []byte) error {
			_, no, _ := tailOf(k)
			entries[names[no]] += len(v) / entrySize
			return nil
		})
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	for k, texts := range want {
		name := string(streamKeyBytes(nil, k))
		wantEntries := len(texts)
		if wantEntries == 1 {
			wantEntries = 0
		}
		if lengths[name] != uint64(len(texts)) || entries[name] != wantEntries {
			t.Errorf("%s: head of length %d and %d entries in the events bucket and the tails, want %d and %d", k, lengths[name], entries[name], len(texts), wantEntries)
		}
	}

	s2, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	reads(s2)
}
