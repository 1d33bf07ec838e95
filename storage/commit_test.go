package storage

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCommitAssignsIndexesIDsAndChain(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	k := key("order", "ord_1")
	res := mustAppend(t, s, k, ev("was_placed", map[string]any{"b": 1, "a": 2}), ev("had_item_added", map[string]any{"sku": "W"}))
	if got := len(res.StreamIDs); got != 2 {
		t.Fatalf("got %d stream ids, want 2", got)
	}
	if got, want := res.StreamIDs[0].String(), "1700000000000-0"; got != want {
		t.Fatalf("first id: got %s, want %s", got, want)
	}
	if got, want := res.StreamIDs[1].String(), "1700000000000-1"; got != want {
		t.Fatalf("second id: got %s, want %s", got, want)
	}
	if got := res.Lengths[0]; got != 2 {
		t.Fatalf("length: got %d, want 2", got)
	}
	evs := allEvents(t, s, k)
	if len(evs) != 2 || evs[0].Index != 1 || evs[1].Index != 2 {
		t.Fatalf("got %+v, want indexes 1 and 2", evs)
	}
	if got, want := string(evs[0].Data), `{"a":2,"b":1}`; got != want {
		t.Fatalf("data stored canonical: got %s, want %s", got, want)
	}
	var prev [32]byte
	for _, e := range evs {
		prev = chainNext(prev, ContentHash(k, e.Type, e.Data, e.Metadata))
		if e.Hash != prev {
			t.Fatalf("event %d: chain hash %x, want %x", e.Index, e.Hash, prev)
		}
	}
	info, err := s.Info(k)
	if err != nil {
		t.Fatal(err)
	}
	if info.Length != 2 || info.LastHash != prev || info.LastStreamID != res.StreamIDs[1] || info.FirstTimestamp != 1705312800 {
		t.Fatalf("info: got %+v", info)
	}
}

// Events that share one metadata slice, canonical or not, each store its canonical form and
// hash it; the other events' metadata is checked on its own.
func TestSharedMetadata(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	shared := []byte(`{"b":1,"a":{"d":2,"c":3}}`)
	own := []byte(`{"z":1,"y":2}`)
	a, b := key("order", "ord_1"), key("inventory", "sku_1")
	rec := &Record{Appends: []Append{
		{Stream: a, Events: []NewEvent{{Type: "was_placed", Data: []byte(`{}`), Metadata: shared}, {Type: "was_noted", Data: []byte(`{}`), Metadata: own}}},
		{Stream: b, Events: []NewEvent{{Type: "was_reserved", Data: []byte(`{}`), Metadata: shared}, {Type: "was_reserved", Data: []byte(`{}`), Metadata: shared[:len(shared):len(shared)]}}},
	}}
	if _, err := s.Commit(rec); err != nil {
		t.Fatal(err)
	}
	want := map[StreamKey][]string{a: {`{"a":{"c":3,"d":2},"b":1}`, `{"y":2,"z":1}`}, b: {`{"a":{"c":3,"d":2},"b":1}`, `{"a":{"c":3,"d":2},"b":1}`}}
	for k, metas := range want {
		var prev [32]byte
		for i, e := range allEvents(t, s, k) {
			if string(e.Metadata) != metas[i] {
				t.Errorf("%s event %d: metadata %s, want %s", k, i+1, e.Metadata, metas[i])
			}
			prev = chainNext(prev, ContentHash(k, e.Type, e.Data, []byte(metas[i])))
			if e.Hash != prev {
				t.Errorf("%s event %d: hash of other bytes than the canonical metadata", k, i+1)
			}
		}
	}
}

// holdPublisher makes publication wait before each group of records until releaseAll is called,
// in whichever goroutine publishes (the log's writer or the publisher); held receives a value
// when a group is waiting. releaseAll runs at the test's cleanup at the latest, before the
// store's close, which waits for the held commits.
func holdPublisher(t *testing.T, s *Store) (held <-chan struct{}, releaseAll func()) {
	h, release := make(chan struct{}, 1), make(chan struct{})
	var releaseOnce sync.Once
	releaseAll = func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(releaseAll)
	s.pubMu.Lock()
	s.publishHook = func() {
		select {
		case h <- struct{}{}:
		default:
		}
		<-release
	}
	s.pubMu.Unlock()
	return h, releaseAll
}

// A commit alone (none in flight, one record in the last group published) is flushed and
// published by its own committer, so one writer at a time never waits for the publisher
// goroutine: with that goroutine stopped, sequential commits still return, each durable and
// visible to readers when it does.
func TestLoneCommitPublishesItself(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	close(s.pubStop)
	<-s.pubDone
	s.pubStop = make(chan struct{}) // for Close, which stops the publisher again
	k := key("order", "o1")
	for i := range 20 {
		done := make(chan error, 1)
		go func() {
			_, err := appendOne(s, k, Expect{Kind: Exactly, Length: uint64(i)}, ev("had_item_added", i))
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			// Restart the publisher so that the stuck commit, and Close, can finish.
			s.pubDone = make(chan struct{})
			go s.publisher()
			t.Fatalf("commit %d did not return without the publisher goroutine", i)
		}
		if n, err := s.Length(k); err != nil || n != uint64(i+1) {
			t.Fatalf("after commit %d: Length = %d, %v; want %d", i, n, err, i+1)
		}
	}
	if got := s.wal.Stats().Groups; got < 20 {
		t.Fatalf("%d log groups for 20 sequential commits, want one each", got)
	}
}

// Concurrent commits are published by the goroutine that writes their group to the log, as its
// fsync returns (wal.Options.OnDurable), not by the publisher goroutine: with that goroutine
// stopped, commits from many writers at once still return, each visible to readers when it does.
func TestLogWriterPublishes(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	close(s.pubStop)
	<-s.pubDone
	s.pubStop = make(chan struct{}) // for Close, which stops the publisher again
	var byFlusher atomic.Int64
	s.pubMu.Lock()
	s.publishHook = func() {
		if bytes.Contains(debug.Stack(), []byte("wal.(*Log).flushLoop")) {
			byFlusher.Add(1)
		}
	}
	s.pubMu.Unlock()
	const writers, commits = 16, 20
	done := make(chan error, writers)
	for w := range writers {
		go func() {
			k := key("order", fmt.Sprintf("o%d", w))
			for i := range commits {
				if _, err := appendOne(s, k, Expect{Kind: Exactly, Length: uint64(i)}, ev("had_item_added", i)); err != nil {
					done <- err
					return
				}
				if n, err := s.Length(k); err != nil || n != uint64(i+1) {
					done <- fmt.Errorf("%s after commit %d: Length = %d, %v", k, i, n, err)
					return
				}
			}
			done <- nil
		}()
	}
	timeout := time.After(10 * time.Second)
	for range writers {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			// Restart the publisher so that the stuck commits, and Close, can finish.
			s.pubDone = make(chan struct{})
			go s.publisher()
			t.Fatal("commits did not return without the publisher goroutine")
		}
	}
	if byFlusher.Load() == 0 {
		t.Fatal("the log's flusher published no group")
	}
}

// A commit that loses to one still waiting for its fsync answers only once the winner is durable
// and visible: the conflict's Actual is then a length readers see, never one that counts events
// not yet acknowledged, and a retry that reads the length finds it.
func TestConflictWaitsForTheWinnerToBeVisible(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	k := key("order", "o1")
	mustAppend(t, s, k, ev("was_placed", 1))
	held, releaseAll := holdPublisher(t, s)
	winner := make(chan error, 1)
	go func() {
		_, err := appendOne(s, k, Expect{Kind: Exactly, Length: 1}, ev("had_item_added", 1))
		winner <- err
	}()
	<-held
	type answer struct {
		err    error
		length uint64
	}
	loser := make(chan answer, 1)
	go func() {
		_, err := appendOne(s, k, Expect{Kind: Exactly, Length: 1}, ev("had_item_added", 2))
		n, lerr := s.Length(k)
		loser <- answer{errors.Join(err, lerr), n}
	}()
	select {
	case a := <-loser:
		t.Fatalf("the loser was answered (%v, readers see length %d) while the winner was not yet visible", a.err, a.length)
	case <-time.After(50 * time.Millisecond):
	}
	releaseAll()
	if err := <-winner; err != nil {
		t.Fatal(err)
	}
	a := <-loser
	var ce *ConflictError
	if !errors.As(a.err, &ce) || ce.Expected != 1 || ce.Actual != 2 {
		t.Fatalf("loser: got %v, want a conflict expecting 1 with actual 2", a.err)
	}
	if a.length != ce.Actual {
		t.Fatalf("right after the conflict readers see length %d, the conflict said %d", a.length, ce.Actual)
	}
}

// TestCommitViewKeepsHeadsReadersCannotSee: a commit view of one head forgets heads at every new
// stream, but never one whose record the publisher has not made visible: a commit to that stream
// would otherwise take its length from readers, who do not see the record yet, and win too.
func TestCommitViewKeepsHeadsReadersCannotSee(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	s.mu.Lock()
	s.mu.heads.bound = 1
	s.mu.Unlock()
	k := key("order", "o1")
	mustAppend(t, s, k, ev("was_placed", 1))
	held, releaseAll := holdPublisher(t, s)
	written := func() uint64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.mu.lsn
	}
	waitWritten := func(lsn uint64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); written() < lsn; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no commit reached lsn %d", lsn)
			}
		}
	}
	errs := make(chan error, 4)
	commit := func(k StreamKey, length uint64) {
		go func() {
			_, err := appendOne(s, k, Expect{Kind: Exactly, Length: length}, ev("e", length))
			errs <- err
		}()
	}
	before := written()
	commit(k, 1) // the winner, held unpublished
	<-held
	waitWritten(before + 1)
	// New streams: past its bound of one, the view forgets what it may at each.
	commit(key("order", "fresh1"), 0)
	waitWritten(before + 2)
	commit(key("order", "fresh2"), 0)
	waitWritten(before + 3)
	commit(k, 1) // the loser
	time.Sleep(20 * time.Millisecond)
	releaseAll()
	var wins, conflicts int
	for range 4 {
		switch err := <-errs; {
		case err == nil:
			wins++
		case errors.Is(err, ErrConflict):
			conflicts++
		default:
			t.Fatal(err)
		}
	}
	if wins != 3 || conflicts != 1 || mustLength(t, s, k) != 2 {
		t.Fatalf("got %d commits and %d conflicts, length %d; want 3 (the winner and the new streams), 1 and 2", wins, conflicts, mustLength(t, s, k))
	}
}

func TestCommitMultiStreamIsAllOrNothing(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	a, b := key("order", "o1"), key("inventory", "i1")
	mustAppend(t, s, b, ev("was_stocked", 1))
	_, err := s.Commit(&Record{Appends: []Append{
		{Stream: a, Expect: Expect{Kind: Exactly, Length: 0}, Events: []NewEvent{ev("was_placed", 1)}},
		{Stream: b, Expect: Expect{Kind: Exactly, Length: 0}, Events: []NewEvent{ev("was_reserved", 1)}},
	}, Puts: []Put{{Space: "idem", Key: "k1", Value: []byte("v")}}})
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) {
		t.Fatalf("got %v, want a conflict", err)
	}
	if ce.Stream != b || ce.Expected != 0 || ce.Actual != 1 {
		t.Fatalf("conflict: got %+v, want stream %v expected 0 actual 1", ce, b)
	}
	if n := mustLength(t, s, a); n != 0 {
		t.Fatalf("first stream written despite conflict: length %d", n)
	}
	if _, err := s.Get("idem", "k1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("record-space put written despite conflict: %v", err)
	}
	res, err := s.Commit(&Record{Appends: []Append{
		{Stream: a, Expect: Expect{Kind: Exactly, Length: 0}, Events: []NewEvent{ev("was_placed", 1)}},
		{Stream: b, Expect: Expect{Kind: Any, Length: 1}, Events: []NewEvent{ev("was_reserved", 1)}},
	}, Puts: []Put{{Space: "idem", Key: "k1", Value: []byte("v")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.StreamIDs) != 2 || !res.StreamIDs[0].Less(res.StreamIDs[1]) {
		t.Fatalf("stream ids: got %v", res.StreamIDs)
	}
	if got, _ := s.Get("idem", "k1"); string(got) != "v" {
		t.Fatalf("record space: got %q, want v", got)
	}
}

func TestExpectations(t *testing.T) {
	cases := []struct {
		name    string
		expect  Expect
		wantErr bool
	}{
		{"exactly-current", Expect{Kind: Exactly, Length: 2}, false},
		{"exactly-stale", Expect{Kind: Exactly, Length: 1}, true},
		{"exactly-ahead", Expect{Kind: Exactly, Length: 3}, true},
		{"any-current", Expect{Kind: Any, Length: 2}, false},
		{"any-stale", Expect{Kind: Any, Length: 0}, true},
		{"skip-ignores-length", Expect{Kind: Skip, Length: 99}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openChecked(t, testOptions())
			k := key("t", "x")
			mustAppend(t, s, k, ev("a", 1), ev("b", 2))
			_, err := appendOne(s, k, c.expect, ev("c", 3))
			if gotErr := errors.Is(err, ErrConflict); gotErr != c.wantErr {
				t.Fatalf("%s: got error %v, want conflict=%v", c.name, err, c.wantErr)
			}
		})
	}
}

func TestInvalidRecords(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	cases := []struct {
		name string
		rec  Record
	}{
		{"empty", Record{}},
		{"no-events", Record{Appends: []Append{{Stream: key("t", "x")}}}},
		{"empty-id", Record{Appends: []Append{{Stream: key("t", ""), Events: []NewEvent{ev("a", 1)}}}}},
		{"nul-in-type", Record{Appends: []Append{{Stream: key("t\x00", "x"), Events: []NewEvent{ev("a", 1)}}}}},
		{"no-event-type", Record{Appends: []Append{{Stream: key("t", "x"), Events: []NewEvent{{Data: []byte(`1`)}}}}}},
		{"bad-json", Record{Appends: []Append{{Stream: key("t", "x"), Events: []NewEvent{{Type: "a", Data: []byte(`{`)}}}}}},
		{"bad-space", Record{Puts: []Put{{Space: "", Key: "k"}}}},
	}
	for _, c := range cases {
		if _, err := s.Commit(&c.rec); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", c.name, err)
		}
	}
}

func TestStreamIDsIncreaseWhenClockStepsBack(t *testing.T) {
	clock := newFakeClock()
	opts := testOptions()
	opts.Clock = clock.Now
	s, dir := openChecked(t, opts)
	k := key("t", "x")
	var ids []StreamID
	steps := []time.Time{time.UnixMilli(5000), time.UnixMilli(5000), time.UnixMilli(4000), time.UnixMilli(6000), time.UnixMilli(1)}
	for _, at := range steps {
		clock.Set(at)
		ids = append(ids, mustAppend(t, s, k, ev("a", 1), ev("b", 2)).StreamIDs...)
	}
	want := []string{"5000-0", "5000-1", "5000-2", "5000-3", "5000-4", "5000-5", "6000-0", "6000-1", "6000-2", "6000-3"}
	for i, id := range ids {
		if id.String() != want[i] {
			t.Fatalf("id %d: got %s, want %s", i, id, want[i])
		}
	}
	// The last id survives a restart: a reopened store continues after it.
	s2 := reopen(t, s, dir, opts)
	res, err := appendOne(s2, k, Expect{Kind: Skip}, ev("c", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.StreamIDs[0].String(); got != "6000-4" {
		t.Fatalf("after reopen: got %s, want 6000-4", got)
	}
}

func TestRacingExactlyCommitsOneWinnerPerLength(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	k := key("counter", "global")
	const writers, rounds = 64, 20
	for round := uint64(0); round < rounds; round++ {
		var wins sync.WaitGroup
		var mu sync.Mutex
		winners, conflicts := 0, 0
		start := make(chan struct{})
		for w := 0; w < writers; w++ {
			wins.Add(1)
			go func() {
				defer wins.Done()
				<-start
				_, err := appendOne(s, k, Expect{Kind: Exactly, Length: round}, ev("was_incremented", 1))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					winners++
				case errors.Is(err, ErrConflict):
					conflicts++
				default:
					t.Error(err)
				}
			}()
		}
		close(start)
		wins.Wait()
		if winners != 1 || conflicts != writers-1 {
			t.Fatalf("length %d: got %d winners and %d conflicts, want 1 and %d", round, winners, conflicts, writers-1)
		}
	}
	if n := mustLength(t, s, k); n != rounds {
		t.Fatalf("length: got %d, want %d", n, rounds)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	opts := testOptions()
	s, dir := openChecked(t, opts)
	k := key("user", "alice")
	for i := 0; i < 50; i++ {
		mustAppend(t, s, k, ev("had_name_updated", map[string]any{"n": i}))
	}
	if _, err := s.Commit(&Record{Puts: []Put{{Space: "sched", Key: "a", Value: []byte("1")}}}); err != nil {
		t.Fatal(err)
	}
	before := allEvents(t, s, k)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	after := allEvents(t, s2, k)
	if len(after) != len(before) {
		t.Fatalf("got %d events after reopen, want %d", len(after), len(before))
	}
	for i := range after {
		if dataOf(after[i]) != dataOf(before[i]) || after[i].Hash != before[i].Hash || after[i].StreamID != before[i].StreamID {
			t.Fatalf("event %d differs after reopen", i+1)
		}
	}
	if v, err := s2.Get("sched", "a"); err != nil || string(v) != "1" {
		t.Fatalf("record space after reopen: got %q, %v", v, err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCommitViewPruningKeepsOCCExact(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	lengths := map[StreamKey]uint64{}
	commitAll := func(round int) {
		for i := 0; i < 20; i++ {
			k := key("t", string(rune('a'+i)))
			if _, err := appendOne(s, k, Expect{Kind: Exactly, Length: lengths[k]}, ev("e", i)); err != nil {
				t.Fatalf("round %d stream %s: %v", round, k, err)
			}
			lengths[k]++
			if _, err := appendOne(s, k, Expect{Kind: Exactly, Length: lengths[k] - 1}, ev("e", i)); !errors.Is(err, ErrConflict) {
				t.Fatalf("round %d stream %s: stale expectation got %v, want conflict", round, k, err)
			}
		}
	}
	prune := func(round int) {
		// New streams past the bound forget the heads readers see, a few at each. In round 1
		// the filter of known streams answers as before its scan is done, so the commit path
		// searches the index for the new streams and adds their heads itself (headLocked).
		s.mu.Lock()
		s.mu.heads.bound = 4
		s.mu.Unlock()
		if round == 1 {
			ready := s.known.ready.Load()
			s.known.ready.Store(false)
			defer s.known.ready.Store(ready)
		}
		for i := range 3 {
			mustAppend(t, s, key("new", fmt.Sprintf("%d-%d", round, i)), ev("e", 0))
		}
		s.mu.Lock()
		n := s.mu.heads.len()
		s.mu.Unlock()
		if n > 4+2 {
			t.Fatalf("round %d: commit view holds %d heads after pruning, want at most its bound and the last new streams", round, n)
		}
	}
	for round := 0; round < 3; round++ {
		commitAll(round)
		indexAll(t, s)
		prune(round)
	}
	// Heads forgotten while their records are in the overlay only: the indexer is held inside
	// its transaction, and the next commits must find the lengths there.
	s.idxMu.Lock()
	held := true
	defer func() {
		if held {
			s.idxMu.Unlock()
		}
	}()
	for round := 3; round < 6; round++ {
		commitAll(round)
		prune(round)
	}
	held = false
	s.idxMu.Unlock()
	commitAll(6)
}

// IfAbsent puts: dropped while their key is known live, written when it is not (first put, after
// a delete, after a restart, or when nothing else would be written), and never relied on past a
// delete that came in between.
func TestIfAbsentPuts(t *testing.T) {
	const space, k = "refs", "actor/user/u1/order/o1"
	opts := testOptions()
	s, dir := openChecked(t, opts)
	put := func(value string) Put { return Put{Space: space, Key: k, Value: []byte(value), IfAbsent: true} }
	order := key("order", "o1")
	commit := func(rec *Record) {
		t.Helper()
		if _, err := s.Commit(rec); err != nil {
			t.Fatal(err)
		}
	}
	holder := func() (uint64, string) {
		t.Helper()
		e, ok := s.spaceHolder(space, k)
		if !ok || !e.live {
			t.Fatalf("%s is not live", k)
		}
		return e.holder, string(e.value)
	}
	appendWith := func(p Put) *Record {
		return &Record{Appends: []Append{{Stream: order, Expect: Expect{Kind: Skip}, Events: []NewEvent{ev("e", 1)}}}, Puts: []Put{p}}
	}

	commit(appendWith(put("a")))
	first, _ := holder()
	commit(appendWith(put("b")))
	if h, v := holder(); h != first || v != "a" {
		t.Fatalf("live key put again: holder %d value %q, want the first put's (%d, \"a\")", h, v, first)
	}
	commit(&Record{Puts: []Put{put("c")}})
	if h, v := holder(); h == first || v != "c" {
		t.Fatalf("a record of nothing but the live key's put: holder %d value %q, want it written", h, v)
	}

	commit(&Record{Deletes: []Delete{{Space: space, Key: k}}})
	commit(appendWith(put("d")))
	if _, v := holder(); v != "d" {
		t.Fatalf("after a delete: value %q, want the put written", v)
	}

	// A delete between the check and the commit: the commit must not rely on the key.
	in, relied := s.dropLivePuts(appendWith(put("e")))
	if len(relied) != 1 || len(in.Puts) != 0 {
		t.Fatalf("dropLivePuts: relied on %v and kept %d puts, want the live key dropped", relied, len(in.Puts))
	}
	commit(&Record{Deletes: []Delete{{Space: space, Key: k}}})
	p, err := prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	p.relied = relied
	if _, err := s.commitPrepared(p); err != errLiveChanged {
		t.Fatalf("commit relying on a deleted key: got %v, want errLiveChanged", err)
	}
	commit(appendWith(put("e")))
	if _, v := holder(); v != "e" {
		t.Fatalf("after a delete raced the check: value %q, want the put written", v)
	}

	// A key relied on again moves to the live set's current generation, so it outlives the one
	// that learnt it however many other keys come and go.
	s.mu.Lock()
	s.live.Lock()
	for i := s.live.cur.n; i < liveGenMax; i++ {
		s.live.add(liveKey{space: "other", liveName: liveName{key: fmt.Sprint(i)}})
	}
	s.live.add(liveKey{space: "other", liveName: liveName{key: "next"}}) // starts a generation
	s.live.Unlock()
	s.mu.Unlock()
	kept, _ := holder()
	commit(appendWith(put("f")))
	if h, _ := holder(); h != kept || !s.live.cur.has(liveKeyOf(&Put{Space: space, Key: k}, false)) {
		t.Fatalf("relied on from the previous generation: holder %d (want %d), in the current one %v",
			h, kept, s.live.cur.has(liveKeyOf(&Put{Space: space, Key: k}, false)))
	}

	// A record that puts and deletes the key leaves it deleted, as in the index.
	commit(&Record{Puts: []Put{put("x")}, Deletes: []Delete{{Space: space, Key: k}}})
	if e, ok := s.spaceHolder(space, k); ok && e.live {
		t.Fatalf("%s live after a record that put and deleted it", k)
	}
	commit(appendWith(put("e2")))
	if _, v := holder(); v != "e2" {
		t.Fatalf("after a put and delete in one record: value %q, want the put written", v)
	}

	// A restart forgets what is live: the first put after it is written again.
	before, _ := holder()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	commit(appendWith(put("f")))
	if h, v := holder(); h == before || v != "f" {
		t.Fatalf("after a restart: holder %d value %q, want the put written", h, v)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Ordered puts (Put.Stream): the key is completed under the commit lock with the stream's first
// timestamp, whether the stream is new in the record or not, so an entity's keys list streams
// by age; IfAbsent works on them as on plain keys, delete included.
func TestOrderedPuts(t *testing.T) {
	const space, prefix = "refs", "actor\x00user\x00u1\x00order\x00"
	s, dir := openChecked(t, testOptions())
	at := func(ts int64) NewEvent { e := ev("e", 1); e.Timestamp = ts; return e }
	put := func(k StreamKey, value string, ifAbsent bool) Put {
		return Put{Space: space, Key: prefix, Value: []byte(value), IfAbsent: ifAbsent, Stream: k}
	}
	commit := func(rec *Record) {
		t.Helper()
		if _, err := s.Commit(rec); err != nil {
			t.Fatal(err)
		}
	}
	scan := func() []string {
		t.Helper()
		var got []string
		if err := s.Scan(space, prefix, func(k string, v []byte) error {
			got = append(got, fmt.Sprintf("%q=%s", k[len(prefix):], v))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(what string, want ...string) {
		t.Helper()
		if got := scan(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
		}
	}
	// The ids sort against the streams' age: "z" is the oldest stream.
	oldest, middle, young := key("order", "z"), key("order", "m"), key("order", "a")

	commit(&Record{Appends: []Append{{Stream: oldest, Events: []NewEvent{at(0x100), at(0x900)}}}, Puts: []Put{put(oldest, "1", false)}})
	check("a new stream", `"0000000000000100\x00z"=1`)

	commit(&Record{Appends: []Append{{Stream: oldest, Expect: Expect{Kind: Skip}, Events: []NewEvent{at(0x500)}}}, Puts: []Put{put(oldest, "2", false)}})
	check("a stream written again keeps its first timestamp", `"0000000000000100\x00z"=2`)

	commit(&Record{
		Appends: []Append{{Stream: young, Events: []NewEvent{at(0x300)}}, {Stream: oldest, Expect: Expect{Kind: Skip}, Events: []NewEvent{at(0x50)}}, {Stream: middle, Events: []NewEvent{at(0x200)}}},
		Puts:    []Put{put(young, "3", false), put(oldest, "4", false), put(middle, "5", false), {Space: space, Key: prefix + "plain", Value: []byte("6")}},
	})
	check("three streams in one record", `"0000000000000100\x00z"=4`, `"0000000000000200\x00m"=5`, `"0000000000000300\x00a"=3`, `"plain"=6`)

	neg := key("order", "n")
	commit(&Record{Appends: []Append{{Stream: neg, Events: []NewEvent{at(-2)}}}, Puts: []Put{put(neg, "7", false)}})
	if got := scan(); got[len(got)-2] != `"fffffffffffffffe\x00n"=7` {
		t.Fatalf("a negative first timestamp: got %v, want it in two's complement", got)
	}

	if _, err := s.Commit(&Record{Appends: []Append{{Stream: young, Expect: Expect{Kind: Skip}, Events: []NewEvent{at(1)}}}, Puts: []Put{put(middle, "x", false)}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a put ordered by a stream the record does not append to: got %v, want ErrInvalid", err)
	}

	// IfAbsent: once the stream exists (a put ordered by a stream its record starts is not
	// remembered, see freshStream), the next put of the key is dropped; a delete of the key,
	// which names it by its final form, makes the next put write it again.
	hot := key("order", "hot")
	commit(&Record{Appends: []Append{{Stream: hot, Events: []NewEvent{at(0x400)}}}, Puts: []Put{put(hot, "a0", true)}})
	commit(&Record{Appends: []Append{{Stream: hot, Expect: Expect{Kind: Skip}, Events: []NewEvent{at(0x401)}}}, Puts: []Put{put(hot, "a", true)}})
	final := prefix + "0000000000000400\x00hot"
	first, ok := s.spaceHolder(space, final)
	if !ok || !first.live || string(first.value) != "a" {
		t.Fatalf("%q live %v value %q after its puts, want live and the second put's", final, first.live, first.value)
	}
	commit(&Record{Appends: []Append{{Stream: hot, Expect: Expect{Kind: Skip}, Events: []NewEvent{at(0x401)}}}, Puts: []Put{put(hot, "b", true)}})
	if e, _ := s.spaceHolder(space, final); e.holder != first.holder || string(e.value) != "a" {
		t.Fatalf("a live ordered key put again: holder %d value %q, want the second put's", e.holder, e.value)
	}
	commit(&Record{Deletes: []Delete{{Space: space, Key: final}}})
	commit(&Record{Appends: []Append{{Stream: hot, Expect: Expect{Kind: Skip}, Events: []NewEvent{at(0x402)}}}, Puts: []Put{put(hot, "c", true)}})
	if e, ok := s.spaceHolder(space, final); !ok || !e.live || string(e.value) != "c" {
		t.Fatalf("after a delete: %q live %v value %q, want the put written", final, e.live, e.value)
	}

	// The record holds the final keys: they survive a restart and a rebuild (openChecked).
	before := scan()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if s, err = Open(dir, testOptions()); err != nil {
		t.Fatal(err)
	}
	if got := scan(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("after a restart: %v, want %v", got, before)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveLeavesOutFreshStreams: the live set does not remember the key of a put ordered by a
// stream its record starts (most such streams are never written again); the stream's next write
// puts the key again and from then on it is known, and dropped.
func TestLiveLeavesOutFreshStreams(t *testing.T) {
	s, _ := openChecked(t, testOptions())
	stream := key("inventory", "sku1")
	put := Put{Space: "refs", Key: "actor\x00user\x00u1\x00inventory\x00", IfAbsent: true, Stream: stream}
	rec := &Record{Appends: []Append{{Stream: stream, Expect: Expect{Kind: Skip}, Events: []NewEvent{ev("e", 1)}}}, Puts: []Put{put}}
	holders := make([]uint64, 3)
	for i := range holders {
		if _, err := s.Commit(rec); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := s.Scan("refs", put.Key, func(k string, _ []byte) error {
			n++
			e, _ := s.spaceHolder("refs", k)
			holders[i] = e.holder
			return nil
		}); err != nil || n != 1 {
			t.Fatalf("commit %d: %d keys under the reference's prefix (%v), want 1", i+1, n, err)
		}
		if known, want := s.live.has(liveKeyOf(&put, false)), i > 0; known != want {
			t.Fatalf("after commit %d: key known live %v, want %v", i+1, known, want)
		}
	}
	if holders[1] == holders[0] || holders[2] != holders[1] {
		t.Fatalf("holders of the key after three commits %v: want the second commit to put it again and the third to drop it", holders)
	}
}
