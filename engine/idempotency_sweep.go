package engine

import (
	"errors"
	"log/slog"
	"time"

	"github.com/j17-go/j17/engine/idempotency"
	"github.com/j17-go/j17/storage"
)

// DefaultIdempotencySweep is how often expired idempotency markers are deleted. An expired
// marker is already never replayed, so the sweep only reclaims space; once an hour keeps the
// cost of scanning the markers small against the 24 h window.
const DefaultIdempotencySweep = time.Hour

// sweepBatch bounds the deletions of one commit, and sweepPause is the rest between two such
// commits, so that a sweep after a busy day takes a small share of the log's commits. sweepPause
// is read when an engine starts; tests lengthen it to stop a sweep midway.
const sweepBatch = 256

// sweepPage is how many markers a sweep reads from storage at a time; tests shorten it to sweep
// in several pages.
var sweepPage = 4096

var sweepPause = 10 * time.Millisecond

// idempotencyTTL is the window after its last use during which a key is replayed.
func (e *Engine) idempotencyTTL() time.Duration {
	if e.opts.IdempotencyTTL > 0 {
		return e.opts.IdempotencyTTL
	}
	return idempotency.TTL
}

// startIdempotencySweep starts the sweeper unless Options.IdempotencySweep turns it off.
func (e *Engine) startIdempotencySweep() {
	every := e.opts.IdempotencySweep
	if every < 0 {
		return
	}
	if every == 0 {
		every = DefaultIdempotencySweep
	}
	pause := sweepPause
	e.idem = startBackground(every, nil, func(stop <-chan struct{}) { e.sweepAll(stop, pause) })
}

// stopIdempotencySweep stops the sweeper and waits for it; a sweep in progress ends after its
// current commit.
func (e *Engine) stopIdempotencySweep() {
	e.idem.halt()
}

func (e *Engine) sweepAll(stop <-chan struct{}, pause time.Duration) {
	pairs := e.openPairs()
	for _, p := range pairs {
		n, err := e.sweepIdempotency(p, stop, pause)
		if err != nil {
			e.log.Error("idempotency sweep failed", slog.String("instance", p.target.Instance),
				slog.String("environment", p.target.Environment), slog.Int("deleted", n), slog.Any("err", err))
		}
		select {
		case <-stop:
			return
		default:
		}
	}
}

// sweepIdempotency deletes the markers of p that are not live, sweepBatch per commit with pause
// between commits, until done or stop closes. It returns how many it deleted. It reads the space
// sweepPage keys at a time, so its memory does not grow with the number of keys.
//
// A marker found expired may be replaced by a new write with its key before the deletion
// commits, so each batch holds the locks of its keys and reads every marker again under them:
// a deletion never removes a marker younger than the window.
func (e *Engine) sweepIdempotency(p *pair, stop <-chan struct{}, pause time.Duration) (int, error) {
	ttl := e.idempotencyTTL()
	deleted := 0
	for after := ""; ; {
		var expired []string
		last, visited, err := p.store.ScanPage(idempotency.Space, "", after, sweepPage, func(key string, value []byte) error {
			mk, err := idempotency.Decode(value)
			if err != nil {
				// Left alone: a replay of this key reports it, and deleting what cannot be read
				// would hide the damage.
				e.log.Warn("undecodable idempotency marker", slog.String("key", key), slog.Any("err", err))
				return nil
			}
			if !mk.Live(e.clock.Now(), ttl) {
				expired = append(expired, key)
			}
			return nil
		})
		if err != nil {
			return deleted, err
		}
		for len(expired) > 0 {
			batch := expired[:min(sweepBatch, len(expired))]
			expired = expired[len(batch):]
			n, err := e.deleteExpired(p, batch, ttl)
			deleted += n
			if err != nil {
				return deleted, err
			}
			if stopped(stop, 0) || (len(expired) > 0 && stopped(stop, pause)) {
				return deleted, nil
			}
		}
		if visited < sweepPage {
			return deleted, nil
		}
		after = last
	}
}

// deleteExpired commits the deletion of those of keys whose markers are still expired.
func (e *Engine) deleteExpired(p *pair, keys []string, ttl time.Duration) (int, error) {
	rec := &storage.Record{Deletes: make([]storage.Delete, 0, len(keys))}
	for _, key := range keys {
		unlock := p.locks.Lock(key)
		defer unlock()
		raw, err := p.store.Get(idempotency.Space, key)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, err
		}
		mk, err := idempotency.Decode(raw)
		if err != nil || mk.Live(e.clock.Now(), ttl) {
			continue
		}
		rec.Deletes = append(rec.Deletes, storage.Delete{Space: idempotency.Space, Key: key})
	}
	if len(rec.Deletes) == 0 {
		return 0, nil
	}
	if _, err := p.store.Commit(rec); err != nil {
		return 0, err
	}
	return len(rec.Deletes), nil
}

// stopped waits up to d for stop to close and reports whether it did; a closed stop wins over a
// zero wait.
func stopped(stop <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return true
	case <-t.C:
		return false
	}
}
