package read

import (
	"strconv"

	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/storage/canonical"
	"github.com/j17-go/j17/tick"
)

// Meta is the metadata block of an aggregate answer.
type Meta struct {
	Length    uint64
	CreatedAt int64
	UpdatedAt int64
}

// AppendState writes a state as JSON; the missing state of a stream whose events all lack a
// handler is the empty object.
func AppendState(dst []byte, v tick.Value) []byte {
	if v.IsMissing() {
		return append(dst, "{}"...)
	}
	return v.AppendJSON(dst)
}

// AppendAggregate writes the answer of GET /{type}/{id}: {"ok":true,"data":...,"metadata":...}.
// A length of 0 (a singleton before its first write) has no timestamps.
func AppendAggregate(dst, stateJSON []byte, m Meta) []byte {
	dst = append(dst, `{"ok":true,`...)
	dst = appendAggregateBody(dst, stateJSON, m)
	return append(dst, '}')
}

// AppendResolved writes one element of a resolved listing: {"id":...,"data":...,"metadata":...}.
func AppendResolved(dst []byte, id string, stateJSON []byte, m Meta) []byte {
	dst = append(dst, `{"id":`...)
	dst = canonical.AppendString(dst, id)
	dst = append(dst, ',')
	dst = appendAggregateBody(dst, stateJSON, m)
	return append(dst, '}')
}

func appendAggregateBody(dst, stateJSON []byte, m Meta) []byte {
	dst = append(dst, `"data":`...)
	dst = append(dst, stateJSON...)
	dst = append(dst, `,"metadata":{"length":`...)
	dst = strconv.AppendUint(dst, m.Length, 10)
	if m.Length > 0 {
		dst = append(dst, `,"created_at":`...)
		dst = strconv.AppendInt(dst, m.CreatedAt, 10)
		dst = append(dst, `,"updated_at":`...)
		dst = strconv.AppendInt(dst, m.UpdatedAt, 10)
	}
	return append(dst, '}')
}

// AppendEvents writes the answer of GET /{type}/{id}/events.
func AppendEvents(dst []byte, evs []storage.Event) []byte {
	dst = append(dst, `{"ok":true,"events":[`...)
	for i := range evs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendEvent(dst, &evs[i])
	}
	return append(dst, "]}"...)
}

// AppendEvent writes one stored event as the events route shows it: stream_id, key, type, data
// and metadata (which holds the timestamp).
func AppendEvent(dst []byte, ev *storage.Event) []byte {
	dst = append(dst, `{"stream_id":"`...)
	dst = strconv.AppendUint(dst, ev.StreamID.Ms, 10)
	dst = append(dst, '-')
	dst = strconv.AppendUint(dst, ev.StreamID.Seq, 10)
	dst = append(dst, `","key":`...)
	dst = canonical.AppendString(dst, ev.Stream.Type+":"+ev.Stream.ID)
	dst = append(dst, `,"type":`...)
	dst = canonical.AppendString(dst, ev.Type)
	dst = append(dst, `,"data":`...)
	dst = appendRaw(dst, ev.Data)
	dst = append(dst, `,"metadata":`...)
	dst = appendRaw(dst, ev.Metadata)
	return append(dst, '}')
}

// AppendLength writes the answer of GET /{type}/{id}/length.
func AppendLength(dst []byte, n uint64) []byte {
	dst = append(dst, `{"ok":true,"length":`...)
	dst = strconv.AppendUint(dst, n, 10)
	return append(dst, '}')
}

// AppendIDs writes a listing of ids; cursor is omitted when empty (the end of the list).
func AppendIDs(dst []byte, ids []string, cursor string) []byte {
	dst = append(dst, `{"ok":true,"data":[`...)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = canonical.AppendString(dst, id)
	}
	dst = append(dst, ']')
	return appendCursor(dst, cursor)
}

// AppendList writes a resolved listing from its already encoded elements.
func AppendList(dst []byte, items [][]byte, cursor string) []byte {
	dst = append(dst, `{"ok":true,"data":[`...)
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, it...)
	}
	dst = append(dst, ']')
	return appendCursor(dst, cursor)
}

func appendCursor(dst []byte, cursor string) []byte {
	if cursor != "" {
		dst = append(dst, `,"cursor":`...)
		dst = canonical.AppendString(dst, cursor)
	}
	return append(dst, '}')
}
