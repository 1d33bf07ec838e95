package storage

import "io"

// EventStore is what the engine needs from an event store. *Store implements it on the local log;
// a clustered backend (one NATS JetStream stream per instance and environment) can implement it
// too, so nothing backend-specific reaches the engine.
type EventStore interface {
	// Commit writes a record atomically, checking every expectation inside the commit.
	Commit(rec *Record) (CommitResult, error)
	// Length is a stream's durable length, O(1).
	Length(k StreamKey) (uint64, error)
	// Info is a stream's length, last hash, first and last timestamps and last stream id.
	Info(k StreamKey) (StreamInfo, error)
	// Event is one event by 1-based index.
	Event(k StreamKey, index uint64) (Event, error)
	// Events pages through a stream after an exclusive stream-id cursor.
	Events(k StreamKey, after StreamID, count int) ([]Event, error)
	// Range replays events from..to (inclusive) in order.
	Range(k StreamKey, from, to uint64, fn func(Event) error) error
	// Hashes returns a stream's chain values, the leaves of its Merkle root.
	Hashes(k StreamKey) ([][32]byte, error)
	// VerifyStream recomputes a stream's chain; it returns the first bad index or 0.
	VerifyStream(k StreamKey) (uint64, error)
	// List pages through the ids of a type in byte order after an exclusive cursor.
	List(typ, cursor string, limit int) ([]string, error)
	// Rewrite replaces every event of a stream and erases the old versions.
	Rewrite(k StreamKey, fn func(Event) (NewEvent, error)) (RewriteResult, error)
	// Erase sets and deletes record-space keys and erases every older value of them.
	Erase(puts []Put, deletes []Delete) error
	// PutSnapshot, GetSnapshot and DropSnapshot manage derived aggregate snapshots.
	PutSnapshot(k StreamKey, snap Snapshot) error
	GetSnapshot(k StreamKey) (Snapshot, bool, error)
	DropSnapshot(k StreamKey) error
	// Get, Scan and ScanPage read the record space that commits write.
	Get(space, key string) ([]byte, error)
	Scan(space, prefix string, fn func(key string, value []byte) error) error
	ScanPage(space, prefix, after string, limit int, fn func(key string, value []byte) error) (last string, visited int, err error)
	// Export and Import move every event as NDJSON.
	Export(w io.Writer) (int, error)
	Import(r io.Reader) (int, error)
	Close() error
}

var _ EventStore = (*Store)(nil)
