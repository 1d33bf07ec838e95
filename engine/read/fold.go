package read

import (
	"fmt"

	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/storage/canonical"
	"github.com/j17-go/j17/tick"
)

// Fold replays events from+1..to of stream k onto state and returns the new state.
func Fold(st storage.EventStore, k storage.StreamKey, handlers map[string]*tick.Handler, state tick.Value, from, to uint64) (tick.Value, error) {
	if to <= from {
		return state, nil
	}
	rp := tick.NewReplayer(handlers, state)
	key := k.String()
	var buf []byte
	err := st.Range(k, from+1, to, func(ev storage.Event) error {
		buf = appendHandlerEvent(buf[:0], key, &ev)
		if err := rp.ApplyJSON(buf); err != nil {
			return fmt.Errorf("%w: %s event %d: %v", ErrHandler, k, ev.Index, err)
		}
		return nil
	})
	if err != nil {
		return tick.Value{}, err
	}
	return rp.State(), nil
}

// AtResult is the state of a stream as of a time.
type AtResult struct {
	State tick.Value
	// Meta counts the events at or before the time and their first and last timestamps.
	Meta Meta
}

// FoldAt replays the events of k (up to length) whose timestamp is at or before at.
func FoldAt(st storage.EventStore, k storage.StreamKey, handlers map[string]*tick.Handler, length uint64, at int64) (AtResult, error) {
	rp := tick.NewReplayer(handlers, tick.Value{})
	key := k.String()
	var buf []byte
	var meta Meta
	err := st.Range(k, 1, length, func(ev storage.Event) error {
		if ev.Timestamp > at {
			return nil
		}
		if meta.Length == 0 {
			meta.CreatedAt = ev.Timestamp
		}
		meta.Length++
		meta.UpdatedAt = ev.Timestamp
		buf = appendHandlerEvent(buf[:0], key, &ev)
		if err := rp.ApplyJSON(buf); err != nil {
			return fmt.Errorf("%w: %s event %d: %v", ErrHandler, k, ev.Index, err)
		}
		return nil
	})
	if err != nil {
		return AtResult{}, err
	}
	return AtResult{State: rp.State(), Meta: meta}, nil
}

// appendHandlerEvent lays out a stored event as the object handlers see as "$".
func appendHandlerEvent(dst []byte, key string, ev *storage.Event) []byte {
	dst = append(dst, `{"key":`...)
	dst = canonical.AppendString(dst, key)
	dst = append(dst, `,"type":`...)
	dst = canonical.AppendString(dst, ev.Type)
	dst = append(dst, `,"data":`...)
	dst = appendRaw(dst, ev.Data)
	dst = append(dst, `,"metadata":`...)
	dst = appendRaw(dst, ev.Metadata)
	return append(dst, '}')
}

func appendRaw(dst, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}
