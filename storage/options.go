package storage

import (
	"log/slog"
	"time"
)

// Options configure a Store. The zero value is the production setting.
type Options struct {
	// Clock gives the time that stream ids are made from; nil is time.Now.
	Clock func() time.Time
	// NoSync skips every fsync, of the log and of the index. Acknowledged writes can then be lost
	// in a machine crash; for tests and benchmarks only.
	NoSync bool
	// SegmentSize is the log's rotation size; 0 is the log's default.
	SegmentSize int64
	// CompressThreshold is passed to the log: records at least this long are compressed; 0 is the
	// log's default and a negative value never compresses.
	CompressThreshold int
	// CacheBytes bounds the cache of decoded log records that serves reads; 0 is 64 MiB and a
	// negative value disables the cache.
	CacheBytes int64
	// Logger receives the store's own messages; nil discards them.
	Logger *slog.Logger

	// namesMergeMin replaces namesMergeMin when it is positive: tests make it small, so that
	// their few streams are merged into the names bucket as well as kept recent.
	namesMergeMin int
	// overlayMaxEntries replaces overlayMaxEntries when it is positive: tests make it small, so
	// that a few commits fill the overlay.
	overlayMaxEntries int
	// tailMergeMin replaces tailMergeMin when it is positive: tests make it small, so that a
	// sweep of the rolling merge over their few streams takes several transactions.
	tailMergeMin int
}

const defaultCacheBytes = 64 << 20

func (o Options) clock() func() time.Time {
	if o.Clock != nil {
		return o.Clock
	}
	return time.Now
}

// indexTuning is what the index's transactions take from Options.
type indexTuning struct {
	namesMergeMin int // recent names that make a transaction merge them (recent_names.go)
	tailMergeMin  int // tail runs a transaction merges at least, when the tails hold as many
}

func (o Options) tuning() indexTuning {
	t := indexTuning{namesMergeMin: namesMergeMin, tailMergeMin: tailMergeMin}
	if o.namesMergeMin > 0 {
		t.namesMergeMin = o.namesMergeMin
	}
	if o.tailMergeMin > 0 {
		t.tailMergeMin = o.tailMergeMin
	}
	return t
}

func (o Options) overlayMax() int {
	if o.overlayMaxEntries > 0 {
		return o.overlayMaxEntries
	}
	return overlayMaxEntries
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.DiscardHandler)
}
