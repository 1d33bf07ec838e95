package storage

import (
	"crypto/sha256"
	"sync"

	"github.com/j17-go/j17/merkle"
	"github.com/j17-go/j17/storage/canonical"
)

// ContentHash is SHA-256(canonical(event)), the per-event input of the hash chain. canonical(event)
// is the canonical JSON object
//
//	{"data":<data>,"key":"<type>:<id>","metadata":<metadata>,"type":"<event type>"}
//
// with data and metadata in canonical form (null when absent). The stream id and the Timestamp
// field are not part of it: the timestamp is hashed as metadata.timestamp, and stream ids are
// assigned after hashing. This is what `j17 verify` recomputes from an export.
func ContentHash(stream StreamKey, eventType string, data, metadata []byte) [32]byte {
	// Room for the members' names, the quotes and a little escaping.
	size := 64 + len(data) + len(metadata) + len(stream.Type) + len(stream.ID) + len(eventType)
	if size <= smallEvent {
		var buf [smallEvent]byte
		return sha256.Sum256(appendCanonicalEvent(buf[:0], stream, eventType, data, metadata))
	}
	bp := eventBufs.Get().(*[]byte)
	b := appendCanonicalEvent((*bp)[:0], stream, eventType, data, metadata)
	sum := sha256.Sum256(b)
	if cap(b) <= maxPooledEvent {
		*bp = b
		eventBufs.Put(bp)
	}
	return sum
}

// smallEvent is the most canonical(event) bytes ContentHash builds on its stack. A larger event
// (an order listing its items, say) takes a buffer from eventBufs: one allocated every time was
// 2.5% of the bytes an order of ten items allocated in process (BenchmarkImplicationWrite).
const smallEvent = 512

// maxPooledEvent bounds the buffers eventBufs keeps: one huge event should not pin its memory.
const maxPooledEvent = 64 << 10

var eventBufs = sync.Pool{New: func() any { return new([]byte) }}

// appendCanonicalEvent appends canonical(event); data and metadata must already be canonical.
func appendCanonicalEvent(dst []byte, stream StreamKey, eventType string, data, metadata []byte) []byte {
	dst = append(dst, `{"data":`...)
	dst = appendOrNull(dst, data)
	dst = append(dst, `,"key":`...)
	dst = appendKeyString(dst, stream)
	dst = append(dst, `,"metadata":`...)
	dst = appendOrNull(dst, metadata)
	dst = append(dst, `,"type":`...)
	dst = canonical.AppendString(dst, eventType)
	return append(dst, '}')
}

// appendKeyString appends canonical.AppendString(stream.String()) without building the string:
// the ':' between type and id is ASCII, so no character spans it and escaping the parts escapes
// the whole.
func appendKeyString(dst []byte, stream StreamKey) []byte {
	dst = canonical.AppendString(dst, stream.Type)
	dst[len(dst)-1] = ':'
	n := len(dst)
	dst = canonical.AppendString(dst, stream.ID)
	copy(dst[n:], dst[n+1:])
	return dst[:len(dst)-1]
}

func appendOrNull(dst, v []byte) []byte {
	if len(v) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, v...)
}

// chainNext is h_i = SHA-256(h_{i-1} || content_i), DESIGN invariant 5.
func chainNext(prev, content [32]byte) [32]byte { return merkle.ChainNext(prev, content) }

var jsonNull = []byte("null")

// canonicalOrNull canonicalizes JSON; an absent value is stored as null.
func canonicalOrNull(v []byte) ([]byte, error) {
	if len(v) == 0 {
		return jsonNull, nil
	}
	if canonical.IsCanonical(v) {
		// The caller's bytes are used as they are until encode copies them into the payload.
		return v, nil
	}
	return canonical.Canonicalize(v)
}
