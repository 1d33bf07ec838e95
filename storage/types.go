package storage

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// StreamKey names a stream: an aggregate type and an aggregate id. Neither part may be empty or
// hold a NUL byte.
type StreamKey struct {
	Type string
	ID   string
}

// String is the "type:id" form that events carry as their key.
func (k StreamKey) String() string { return k.Type + ":" + k.ID }

func (k StreamKey) valid() bool {
	return k.Type != "" && k.ID != "" && !strings.ContainsRune(k.Type, 0) && !strings.ContainsRune(k.ID, 0)
}

// NewEvent is an event to append. Data and Metadata must be JSON (nil stands for null); they are
// stored in canonical form. Timestamp is Unix seconds, the value of metadata.timestamp.
type NewEvent struct {
	Type      string
	Data      json.RawMessage
	Metadata  json.RawMessage
	Timestamp int64
}

// Event is a stored event. Data and Metadata are canonical JSON and share memory with the store's
// read cache: callers must not modify them.
type Event struct {
	Stream    StreamKey
	Index     uint64 // 1-based position in the stream
	StreamID  StreamID
	Type      string
	Data      json.RawMessage
	Metadata  json.RawMessage
	Timestamp int64
	Hash      [32]byte // chain value h_Index
}

// StreamID is a Redis-style "<unix ms>-<seq>" id. It orders events within a store.
type StreamID struct {
	Ms  uint64
	Seq uint64
}

func (s StreamID) String() string {
	return strconv.FormatUint(s.Ms, 10) + "-" + strconv.FormatUint(s.Seq, 10)
}

// Less reports whether s comes before t.
func (s StreamID) Less(t StreamID) bool { return s.Ms < t.Ms || (s.Ms == t.Ms && s.Seq < t.Seq) }

// IsZero reports whether s is the zero id "0-0", which precedes every assigned id.
func (s StreamID) IsZero() bool { return s == StreamID{} }

// ParseStreamID parses "<ms>-<seq>"; a bare "<ms>" means "<ms>-0".
func ParseStreamID(s string) (StreamID, error) {
	msPart, seqPart, hasSeq := strings.Cut(s, "-")
	ms, err := strconv.ParseUint(msPart, 10, 64)
	if err != nil {
		return StreamID{}, fmt.Errorf("%w: stream id %q", ErrInvalid, s)
	}
	var seq uint64
	if hasSeq {
		if seq, err = strconv.ParseUint(seqPart, 10, 64); err != nil {
			return StreamID{}, fmt.Errorf("%w: stream id %q", ErrInvalid, s)
		}
	}
	return StreamID{Ms: ms, Seq: seq}, nil
}

// ExpectKind says how a commit checks a stream's length.
type ExpectKind uint8

const (
	// Any is internal OCC: Length is the length the caller read while preparing the events; the
	// commit fails with a conflict if the stream moved since. Callers may retry such a conflict.
	Any ExpectKind = iota
	// Exactly is external OCC: Length is the client's previous_length. A conflict is final.
	Exactly
	// Skip appends at the current end without any check (skip_occ).
	Skip
)

func (k ExpectKind) String() string {
	switch k {
	case Any:
		return "any"
	case Exactly:
		return "exactly"
	case Skip:
		return "skip"
	}
	return "ExpectKind(" + strconv.Itoa(int(k)) + ")"
}

// Expect is the expectation an append places on its stream.
type Expect struct {
	Kind   ExpectKind
	Length uint64
}

// Append is the part of a record that adds events to one stream.
type Append struct {
	Stream StreamKey
	Expect Expect
	Events []NewEvent
}

// Put sets Key in the record space Space to Value.
type Put struct {
	Space string
	Key   string
	Value []byte
	// IfAbsent says that the put only needs the key to be live: Commit may drop it when it
	// knows the key is (the key then keeps the value it has), and writes it otherwise. For keys
	// that many commits put again and again with the same value, such as references.
	IfAbsent bool
	// Stream, when set, orders the key by the age of one of the record's streams: the key
	// stored is Key, then the stream's first timestamp as 16 lowercase hex digits (two's
	// complement), then a NUL byte and Stream.ID. A B+tree takes new keys one after another
	// instead of at random places, which matters for keys put once per new stream: under one
	// Key, those of new streams land at the end. Stream must be appended to by the record; the
	// first timestamp is the head's, or the timestamp of the stream's first event in this
	// record when the stream is empty.
	Stream StreamKey
}

// orderedKeyTail is the size of what an ordered put adds to its Key before Stream.ID: 16 hex
// digits and a NUL byte.
const orderedKeyTail = 17

// Delete removes Key from the record space Space.
type Delete struct {
	Space string
	Key   string
}

// Record is what one Commit writes: one log record, all of it or none of it. Appends to the same
// stream apply in order, each expectation checked against the length the previous one left.
type Record struct {
	Appends []Append
	Puts    []Put
	Deletes []Delete
}

// CommitResult reports what a commit assigned.
type CommitResult struct {
	// StreamIDs holds the ids of every appended event, in the order of the record's appends and
	// their events.
	StreamIDs []StreamID
	// Lengths holds, per append, the stream's length after it.
	Lengths []uint64
}

// StreamInfo is what the index keeps per stream.
type StreamInfo struct {
	Length         uint64
	LastHash       [32]byte
	FirstTimestamp int64
	LastTimestamp  int64
	LastStreamID   StreamID
}

// Snapshot is a saved aggregate state: the state after the first Length events of a stream,
// computed by spec version SpecVersion.
type Snapshot struct {
	Length      uint64
	SpecVersion uint64
	State       []byte
}
