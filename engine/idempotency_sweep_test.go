package engine

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/idempotency"
	"github.com/j17-go/j17/storage"
)

func newSweepFixture(t *testing.T, opts Options) (*fixture, *manualClock) {
	t.Helper()
	clock := &manualClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	opts.Clock = clock
	return newFixture(t, opts), clock
}

func (f *fixture) keyedWrite(t *testing.T, key, body string) WriteAnswer {
	t.Helper()
	ans, err := f.e.Write(f.t, WriteInput{AggregateType: "counter", ID: "global", EventType: "was_incremented",
		Body: []byte(body), IdempotencyKey: key, HasKey: true, RequestID: "req-" + key})
	if err != nil {
		t.Fatalf("write with key %q: %v", key, err)
	}
	return ans
}

func (f *fixture) hasMarker(t *testing.T, key string) bool {
	t.Helper()
	p, err := f.e.open(f.t)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.store.Get(idempotency.Space, key)
	if errors.Is(err, storage.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func (f *fixture) markerCount(t *testing.T) int {
	t.Helper()
	p, err := f.e.open(f.t)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := p.store.Scan(idempotency.Space, "", func(string, []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func bodyN(n int) string {
	return fmt.Sprintf(`{"data":{"n":%d},"metadata":{"actor":{"type":"user","id":"%s"}}}`, n, actorID)
}

// The background sweep deletes the markers past the window and only those: a younger key still
// replays, and the key of a deleted marker is a new request again (the Writing Events page's
// "the cache lasts 24 hours").
func TestIdempotencySweepDeletesOnlyExpiredMarkers(t *testing.T) {
	f, clock := newSweepFixture(t, Options{IdempotencySweep: 5 * time.Millisecond, SchedulerPoll: -1})
	f.keyedWrite(t, "old", bodyN(1))
	clock.advance(idempotency.TTL / 2)
	young := f.keyedWrite(t, "young", bodyN(2))
	// "old" is now exactly one window old, "young" half of one.
	clock.advance(idempotency.TTL / 2)

	deadline := time.Now().Add(10 * time.Second)
	for f.hasMarker(t, "old") {
		if time.Now().After(deadline) {
			t.Fatal("the marker of an expired key is still stored")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !f.hasMarker(t, "young") {
		t.Fatal("the sweep deleted a marker younger than the window")
	}
	again := f.keyedWrite(t, "young", bodyN(2))
	if !again.Replayed || string(again.Body) != string(young.Body) || again.RequestID != "req-young" {
		t.Errorf("young key after the sweep: replayed %v body %s request %q, want the first answer %s", again.Replayed, again.Body, again.RequestID, young.Body)
	}
	// Another body under the swept key is a new request, not a 422 reuse.
	fresh := f.keyedWrite(t, "old", bodyN(3))
	if fresh.Replayed || fresh.Status != 201 {
		t.Errorf("swept key: status %d replayed %v, want a new 201", fresh.Status, fresh.Replayed)
	}
	if n, err := f.store(t).Length(key); err != nil || n != 3 {
		t.Errorf("stream length %d (%v), want 3 (two keyed writes, one rewrite of the swept key)", n, err)
	}
}

// An expired key that the sweep has not reached yet is not replayed either, and the new write
// replaces its marker, which the sweep must then leave alone.
func TestIdempotencyRetryAfterExpiryIsNewRequest(t *testing.T) {
	f, clock := newSweepFixture(t, Options{IdempotencySweep: -1, SchedulerPoll: -1})
	first := f.keyedWrite(t, "k", bodyN(1))
	clock.advance(idempotency.TTL)
	second := f.keyedWrite(t, "k", bodyN(1))
	if second.Replayed || string(second.Body) == string(first.Body) {
		t.Fatalf("retry after expiry: replayed %v body %s, want a new write", second.Replayed, second.Body)
	}
	p, _ := f.e.open(f.t)
	if n, err := f.e.sweepIdempotency(p, nil, 0); err != nil || n != 0 {
		t.Fatalf("sweep deleted %d (%v), want 0: the marker was renewed by the new write", n, err)
	}
	if third := f.keyedWrite(t, "k", bodyN(1)); !third.Replayed || string(third.Body) != string(second.Body) {
		t.Errorf("third use: replayed %v body %s, want the second answer %s", third.Replayed, third.Body, second.Body)
	}
}

// A configured window replaces the 24 hours for both replay and deletion, and a sweep spreads its
// deletions over commits of at most sweepBatch, reading the markers in pages.
func TestIdempotencySweepWindowAndBatches(t *testing.T) {
	defer func(n int) { sweepPage = n }(sweepPage)
	sweepPage = sweepBatch + 44 // two pages, the first of two commits
	const window = time.Hour
	f, clock := newSweepFixture(t, Options{IdempotencyTTL: window, IdempotencySweep: -1, SchedulerPoll: -1})
	total := 2*sweepBatch + 7
	for i := 0; i < total; i++ {
		f.keyedWrite(t, fmt.Sprint("k", i), bodyN(i))
	}
	clock.advance(window - time.Millisecond)
	p, _ := f.e.open(f.t)
	if n, err := f.e.sweepIdempotency(p, nil, 0); err != nil || n != 0 {
		t.Fatalf("sweep before the window: deleted %d (%v), want 0", n, err)
	}
	if ans := f.keyedWrite(t, "k0", bodyN(0)); !ans.Replayed {
		t.Fatal("a key inside the configured window was not replayed")
	}
	clock.advance(time.Millisecond)
	// A closed stop ends the sweep after its first commit: exactly one batch.
	stopped := make(chan struct{})
	close(stopped)
	n, err := f.e.sweepIdempotency(p, stopped, 0)
	if err != nil || n != sweepBatch {
		t.Fatalf("one commit of the sweep deleted %d (%v), want %d", n, err, sweepBatch)
	}
	rest, err := f.e.sweepIdempotency(p, nil, 0)
	if err != nil || n+rest != total-1 {
		t.Fatalf("sweep after the window: deleted %d (%v), want %d (k0 was renewed)", n+rest, err, total-1)
	}
	if left := f.markerCount(t); left != 1 || !f.hasMarker(t, "k0") {
		t.Errorf("%d markers left, want only k0", left)
	}
}

// Close stops a sweep in the middle: between two paced commits, not after the last marker. The
// markers are written by an engine without a sweep, so that the one under test finds them all
// expired at its first pass, after a restart.
func TestIdempotencySweepStopsOnClose(t *testing.T) {
	f, clock := newSweepFixture(t, Options{IdempotencySweep: -1, SchedulerPoll: -1})
	for i := 0; i < sweepBatch+1; i++ {
		f.keyedWrite(t, fmt.Sprint("k", i), bodyN(i))
	}
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	clock.advance(idempotency.TTL)

	defer func(d time.Duration) { sweepPause = d }(sweepPause)
	sweepPause = time.Hour
	opts := f.e.opts
	opts.IdempotencySweep = time.Millisecond
	var err error
	if f.e, err = New(opts); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.markerCount(t) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d markers left, want the one past the first batch", f.markerCount(t))
		}
		time.Sleep(time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- f.e.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for a paced sweep to finish")
	}
	select {
	case <-f.e.idem.done:
	default:
		t.Fatal("the sweeper still runs after Close")
	}
}
