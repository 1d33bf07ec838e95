package write

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/tombstone"
	"github.com/j17-go/j17/storage"
)

// Expander adds to rec the appends of the events a plan implies, and returns how many it added.
// It sees the record before the commit: implied events go into the same record as their
// trigger. It is called again for a retry, on a fresh record.
type Expander func(p *Plan, rec *storage.Record) (implied int, err error)

// Options tune Commit.
type Options struct {
	// Expand runs implications; nil refuses triggers that declare any.
	Expand Expander
	// Stateless says that what Expand adds does not depend on the state or the length of the
	// plan's stream, so that the record needs no internal OCC: a write without an expectation
	// then appends without reading the length, as when Expand is nil.
	Stateless bool
	// Puts returns extra puts for the record, given the stream length the events will follow
	// and the number of implied events; nil adds none. An idempotency marker comes from here.
	Puts func(after uint64, implied int) []storage.Put
	// AfterCommit, when set, runs after a successful commit and before Commit returns.
	AfterCommit func()
}

// Result is what a committed write assigned.
type Result struct {
	StreamIDs []storage.StreamID
	// From is the 1-based index of the first written event of the plan's stream.
	From    uint64
	Implied int
}

// skipRetries bounds the retries of a skip_occ write that must know its position (one carrying
// extra puts): such a write expects the length it read, and under contention tries again.
const skipRetries = 64

// Commit commits a plan as one record with its optimistic concurrency mode.
func Commit(st storage.EventStore, p *Plan, opts Options) (Result, error) {
	if opts.Expand == nil {
		for _, t := range p.Triggers {
			if len(t.Implications) > 0 {
				return Result{}, problem.New(problem.ErrInvalid, "Event type '%s' has implications, and %s", t.Type, ErrImplicationsUnsupported)
			}
		}
	}
	attempts := 2
	switch {
	case p.Expect == storage.Exactly:
		attempts = 1
	case p.Expect == storage.Skip && opts.Puts != nil:
		attempts = skipRetries
	}
	var last *storage.ConflictError
	for i := 0; i < attempts; i++ {
		res, err := commitOnce(st, p, opts)
		if err == nil {
			if opts.AfterCommit != nil {
				opts.AfterCommit()
			}
			return res, nil
		}
		if last = ownConflict(err, p.Stream); last == nil {
			return res, err
		}
	}
	return Result{}, conflict(last)
}

// ownConflict returns err's conflict on stream, or nil. It is apart from Commit so that the error
// target it declares is allocated only for a failed commit.
func ownConflict(err error, stream storage.StreamKey) *storage.ConflictError {
	var c *storage.ConflictError
	if errors.As(err, &c) && c.Stream == stream {
		return c
	}
	return nil
}

func commitOnce(st storage.EventStore, p *Plan, opts Options) (Result, error) {
	app := storage.Append{Stream: p.Stream, Events: p.Events}
	var from uint64
	switch {
	case p.Expect == storage.Exactly:
		app.Expect = storage.Expect{Kind: storage.Exactly, Length: p.Length}
		from = p.Length + 1
	case p.Expect == storage.Skip && opts.Puts == nil, p.Expect == storage.Any && (opts.Expand == nil || opts.Stateless) && opts.Puts == nil:
		// Internal OCC guards a record built from the state it read. When nothing in the record
		// depends on the state, no interleaving can make it stale: appending at the end without
		// a length read is the same write, one lookup cheaper.
		app.Expect = storage.Expect{Kind: storage.Skip}
	default:
		n, err := st.Length(p.Stream)
		if err != nil {
			return Result{}, err
		}
		app.Expect = storage.Expect{Kind: storage.Any, Length: n}
		from = n + 1
	}
	// The record and its one append are allocated together.
	one := &struct {
		rec storage.Record
		app [1]storage.Append
	}{app: [1]storage.Append{app}}
	rec := &one.rec
	rec.Appends = one.app[:]
	implied := 0
	if opts.Expand != nil {
		n, err := opts.Expand(p, rec)
		if err != nil {
			return Result{}, err
		}
		implied = n
	}
	rec.Puts = tombstone.AppendRefPuts(rec.Puts, rec.Appends, p.sp)
	if opts.Puts != nil {
		rec.Puts = append(rec.Puts, opts.Puts(from-1, implied)...)
	}
	cr, err := st.Commit(rec)
	if err != nil {
		return Result{}, fmt.Errorf("commit %s: %w", p.Stream, err)
	}
	if from == 0 {
		from = cr.Lengths[0] - uint64(len(p.Events)) + 1
	}
	return Result{StreamIDs: cr.StreamIDs[:len(p.Events)], From: from, Implied: implied}, nil
}

func conflict(c *storage.ConflictError) error {
	return &problem.Error{
		Kind:    problem.ErrConflict,
		Message: fmt.Sprintf("Concurrent write detected. Stream has %d events, expected %d.", c.Actual, c.Expected),
		Details: map[string]any{"expected": c.Expected, "actual": c.Actual},
	}
}

// AppendAnswer writes the 201 answer of a write: stream_id for a single event, stream_ids and
// count for a batch, and implied_count unless it is 0.
func AppendAnswer(dst []byte, batch bool, ids []storage.StreamID, implied int) []byte {
	// One growth for the whole answer: a stream id takes at most 41 bytes with its quotes and
	// comma, the rest at most 64.
	dst = slices.Grow(dst, 64+41*len(ids))
	dst = append(dst, `{"ok":true,`...)
	if batch {
		dst = append(dst, `"stream_ids":[`...)
		for i, id := range ids {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendStreamID(append(dst, '"'), id)
			dst = append(dst, '"')
		}
		dst = append(dst, `],"count":`...)
		dst = strconv.AppendInt(dst, int64(len(ids)), 10)
	} else {
		dst = appendStreamID(append(dst, `"stream_id":"`...), ids[0])
		dst = append(dst, '"')
	}
	if implied > 0 {
		dst = append(dst, `,"implied_count":`...)
		dst = strconv.AppendInt(dst, int64(implied), 10)
	}
	return append(dst, '}')
}

// appendStreamID appends id as its String does, without the intermediate strings.
func appendStreamID(dst []byte, id storage.StreamID) []byte {
	dst = strconv.AppendUint(dst, id.Ms, 10)
	return strconv.AppendUint(append(dst, '-'), id.Seq, 10)
}
