package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// counters are the running totals the workers keep.
type counters struct {
	writes, events, batches, idempotent, orders, reads, unavailable, conflicts atomic.Int64
	scheduling, sagas, charges                                                 atomic.Int64
}

// statusLog keeps the first few unexpected answers and counts them all.
type statusLog struct {
	mu    sync.Mutex
	n     int
	first []string
}

func (l *statusLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if len(l.first) < 5 {
		l.first = append(l.first, fmt.Sprintf(format, args...))
	}
}

func (l *statusLog) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d answers, the first: %v", ErrStatus, l.n, l.first)
}

// workload is what the workers share.
type workload struct {
	c      *client
	key    string
	ledger *Ledger
	users  []string
	orders []string
	count  *counters
	bad    *statusLog
	op     *operator
	// uncharged are the sagas started whose charge has not been confirmed yet.
	uncharged queue
}

// queue is a first-in, first-out list of ids, safe for concurrent use.
type queue struct {
	mu  sync.Mutex
	ids []string
}

func (q *queue) push(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids = append(q.ids, id)
}

func (q *queue) pop() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.ids) == 0 {
		return "", false
	}
	id := q.ids[0]
	q.ids = q.ids[1:]
	return id, true
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ids)
}

// downPause is how long a worker waits after finding the server down.
const downPause = 20 * time.Millisecond

// conflictPause is how long an idempotent write waits before it is sent again after a conflict,
// so that contending writers spread out as the documentation's clients do.
const conflictPause = 5 * time.Millisecond

// maxRetry bounds how long an idempotent write is retried across restarts.
const maxRetry = 2 * time.Minute

// worker runs one random mix of operations until ctx ends, one every interval at most (0 means
// as fast as the server answers).
func (w *workload) worker(ctx context.Context, id int, rng *rand.Rand, interval time.Duration) {
	next := time.Now()
	for seq := 0; ctx.Err() == nil; seq++ {
		if interval > 0 {
			next = next.Add(interval)
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			} else {
				next = time.Now()
			}
		}
		nonce := fmt.Sprintf("w%d-%d", id, seq)
		user := Stream{"user", w.users[rng.IntN(len(w.users))]}
		order := Stream{"order", w.orders[rng.IntN(len(w.orders))]}
		// Per mille: writes, batches, orders, schedules, sagas and their charges, run_due, reads.
		switch p := rng.IntN(1000); {
		case p < 300:
			w.record(w.write(ctx, user, "had_name_updated", nonce, false))
		case p < 450:
			w.record(w.write(ctx, user, "had_name_updated", nonce, true))
		case p < 600:
			w.batch(ctx, user, nonce, 2+rng.IntN(3))
		case p < 700:
			if w.record(w.write(ctx, order, "was_placed", nonce, false)) {
				w.ledger.AckImplied("order:" + order.ID)
				w.count.orders.Add(1)
			}
		case p < 730:
			// The spec schedules a reminder, five minutes later, into the reminder stream of the
			// same id.
			if w.record(w.write(ctx, order, "had_reminder_requested", nonce, false)) {
				w.ledger.AckScheduled(Stream{"reminder", order.ID}, nonce)
				w.count.scheduling.Add(1)
			}
		case p < 740:
			w.startSaga(ctx, newUUID(rng), nonce)
		case p < 780:
			w.charge(ctx)
		case p < 782:
			w.fireDue()
		default:
			w.read(user.ID, rng.IntN(4))
		}
	}
}

// fireDue fires every pending schedule at once, as the scheduler will when their five minutes
// are up (run_due, which staging accepts, with a time ahead of them all). Workers do it
// concurrently, and the kills interrupt it: each schedule must still fire exactly once.
func (w *workload) fireDue() {
	switch err := w.op.runDue(); {
	case errors.Is(err, ErrStatus):
		w.bad.add("%v", err)
	case err != nil:
		// No answer: the server is down or was killed meanwhile.
		w.count.unavailable.Add(1)
	}
}

// record adds an acknowledged write to the ledger and tells whether there was one.
func (w *workload) record(s Stream, a Acked, ok bool) bool {
	if ok {
		w.ledger.Ack(s, a)
	}
	return ok
}

// startSaga starts the checkout saga of the spec on a new checkout id, with an idempotency key:
// the saga's first step asks the payment aggregate of that id for a charge and awaits its
// confirmation (charge), the second and its completion report to notification/global.
func (w *workload) startSaga(ctx context.Context, id, nonce string) {
	if _, _, ok := w.write(ctx, Stream{"checkout", id}, "was_started", nonce, true); ok {
		w.ledger.AckSaga(id)
		w.uncharged.push(id)
		w.count.sagas.Add(1)
	}
}

// charge confirms the charge of the oldest saga waiting for one, once the saga has asked for it
// (its charge_requested is on the payment stream): an event written before the saga awaits it
// would not be the one it awaits. A saga not there yet goes back to the end of the queue.
func (w *workload) charge(ctx context.Context) {
	id, ok := w.uncharged.pop()
	if !ok {
		return
	}
	path := "/payment/" + id + "/length"
	status, b, err := w.c.do("GET", path, w.key, nil)
	if err != nil {
		w.count.unavailable.Add(1)
		w.uncharged.push(id)
		time.Sleep(downPause)
		return
	}
	var ans struct{ Length int }
	switch {
	case status == 404:
		w.uncharged.push(id)
		return
	case status != 200 || json.Unmarshal(b, &ans) != nil:
		w.bad.add("GET %s: %d %s", path, status, b)
		return
	case ans.Length == 0:
		w.uncharged.push(id)
		return
	}
	// The write carries an idempotency key and is retried across restarts: the saga would
	// otherwise wait for it until its timeout.
	if _, _, ok := w.write(ctx, Stream{"payment", id}, "was_charged", "charge-"+id, true); ok {
		w.count.charges.Add(1)
	} else if ctx.Err() == nil {
		w.uncharged.push(id)
	}
}

// actor is the metadata of every write.
func (w *workload) actor() map[string]any {
	return map[string]any{"actor": map[string]any{"type": "user", "id": w.users[0]}}
}

func eventData(typ, nonce string) map[string]any {
	if typ == "was_placed" {
		return map[string]any{"items": []any{nonce}, NonceField: nonce}
	}
	return map[string]any{"name": "name " + nonce, NonceField: nonce}
}

// write posts one event and returns it, once acknowledged, for the ledger. With retry, it carries
// an idempotency key and is sent again, with the same key and body, until it gets an answer: a
// crash in between must not write it twice.
func (w *workload) write(ctx context.Context, s Stream, typ, nonce string, retry bool) (Stream, Acked, bool) {
	data := eventData(typ, nonce)
	body, _ := json.Marshal(map[string]any{"data": data, "metadata": w.actor()})
	var headers []string
	if retry {
		headers = []string{"X-Idempotency-Key", "soak-" + nonce}
	}
	path := "/" + s.Type + "/" + s.ID + "/" + typ
	status, b, ok := w.send(ctx, path, body, retry, headers)
	for retry && ok && w.conflict(status, b) && ctx.Err() == nil {
		time.Sleep(conflictPause)
		status, b, ok = w.send(ctx, path, body, retry, headers)
	}
	if !ok || w.conflict(status, b) {
		return s, Acked{}, false
	}
	var ans struct {
		StreamID string `json:"stream_id"`
	}
	if status != 201 || json.Unmarshal(b, &ans) != nil || ans.StreamID == "" {
		w.bad.add("POST %s: %d %s", path, status, b)
		return s, Acked{}, false
	}
	raw, _ := json.Marshal(data)
	if retry {
		w.count.idempotent.Add(1)
	}
	w.count.writes.Add(1)
	w.count.events.Add(1)
	return s, Acked{StreamID: ans.StreamID, Data: raw}, true
}

// batch posts n events to one stream in one request.
func (w *workload) batch(ctx context.Context, s Stream, nonce string, n int) {
	events := make([]map[string]any, n)
	datas := make([]json.RawMessage, n)
	for i := range events {
		d := eventData("had_name_updated", fmt.Sprintf("%s.%d", nonce, i))
		events[i] = map[string]any{"type": "had_name_updated", "data": d}
		datas[i], _ = json.Marshal(d)
	}
	body, _ := json.Marshal(map[string]any{"events": events, "metadata": w.actor()})
	path := "/" + s.Type + "/" + s.ID
	status, b, ok := w.send(ctx, path, body, false, nil)
	if !ok || w.conflict(status, b) {
		return
	}
	var ans struct {
		StreamIDs []string `json:"stream_ids"`
	}
	if status != 201 || json.Unmarshal(b, &ans) != nil || len(ans.StreamIDs) != n {
		w.bad.add("POST %s (batch of %d): %d %s", path, n, status, b)
		return
	}
	acked := make([]Acked, n)
	for i := range acked {
		acked[i] = Acked{StreamID: ans.StreamIDs[i], Data: datas[i]}
	}
	w.ledger.Ack(s, acked...)
	w.count.writes.Add(1)
	w.count.batches.Add(1)
	w.count.events.Add(int64(n))
}

// conflict tells a 409 conflict, which the Writing Events page documents for a write without
// previous_length whose one automatic retry also met a concurrent write: it commits nothing, so
// it is counted, not acknowledged, and an idempotent write is sent again with its key.
func (w *workload) conflict(status int, body []byte) bool {
	var ans struct{ Code string }
	if status != 409 || json.Unmarshal(body, &ans) != nil || ans.Code != "conflict" {
		return false
	}
	w.count.conflicts.Add(1)
	return true
}

// send posts body to path; ok is false when no answer came (and, with retry, none came before
// ctx ended or maxRetry passed).
func (w *workload) send(ctx context.Context, path string, body []byte, retry bool, headers []string) (int, []byte, bool) {
	give := time.Now().Add(maxRetry)
	for {
		status, b, err := w.c.do("POST", path, w.key, body, headers...)
		if err == nil {
			return status, b, true
		}
		w.count.unavailable.Add(1)
		if !retry || ctx.Err() != nil || time.Now().After(give) {
			return 0, nil, false
		}
		time.Sleep(downPause)
	}
}

// read sends one of the read routes; an aggregate not yet written answers 404.
func (w *workload) read(user string, which int) {
	path := []string{"/user/" + user, "/user/" + user + "/length", "/user/" + user + "/events?count=20", "/user?limit=10"}[which]
	status, b, err := w.c.do("GET", path, w.key, nil)
	if err != nil {
		w.count.unavailable.Add(1)
		time.Sleep(downPause)
		return
	}
	if status != 200 && !(status == 404 && which < 3) {
		w.bad.add("GET %s: %d %s", path, status, b)
		return
	}
	w.count.reads.Add(1)
}

// newUUID draws a version-4 UUID from rng, so that a seed gives the same ids.
func newUUID(rng *rand.Rand) string {
	a, b := rng.Uint64(), rng.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, a>>16&0xffff, a&0xfff, 0x8000|b>>48&0x3fff, b&0xffffffffffff)
}
