package wal

import "log/slog"

// DefaultSegmentSize is the rotation size used when Options.SegmentSize is 0.
const DefaultSegmentSize = 64 << 20

// DefaultPrealloc is how far ahead of the writer a segment is zero-filled when Options.Prealloc is 0.
const DefaultPrealloc = 1 << 20

// Options configure a Log. The zero value is the production setting.
type Options struct {
	SegmentSize       int64        // rotate before a segment would exceed this; 0 = 64 MiB; must be < 4 GiB
	CompressThreshold int          // payloads at least this long are compressed; 0 = the measured default; <0 = never
	Prealloc          int64        // zero-fill the active segment this far ahead of the writer; 0 = 1 MiB; <0 = never
	NoSync            bool         // skip fsync; for tests and benchmarks only, never the default
	Logger            *slog.Logger // nil = discard
	FS                FS           // nil = the operating system's filesystem; tests inject one that can crash
	// OnDurable, when set, is called by whoever wrote a group (the flusher, or a Flush) after
	// the group's fsync, once End covers it, and before its waiters are woken. It runs with no
	// lock of the log held, but no other group is written until it returns, so it must be short
	// and must neither write to the log nor wait for it. doc.go says what it is for.
	OnDurable func()
}
