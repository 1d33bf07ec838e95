package soak

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
)

// Stream names one aggregate.
type Stream struct{ Type, ID string }

func (s Stream) String() string { return s.Type + "/" + s.ID }

// Acked is one event of an acknowledged write: the stream id its answer gave and the data sent.
type Acked struct {
	StreamID string
	Data     json.RawMessage
}

// Event is one event as read back from GET /{type}/{id}/events.
type Event struct {
	StreamID string          `json:"stream_id"`
	Data     json.RawMessage `json:"data"`
}

// Ledger remembers every acknowledged write, so that a check can ask for each of them back.
type Ledger struct {
	mu      sync.Mutex
	streams map[Stream][]Acked
	implied map[string]int
}

// NewLedger returns an empty Ledger.
func NewLedger() *Ledger {
	return &Ledger{streams: map[Stream][]Acked{}, implied: map[string]int{}}
}

// Ack records the events of one acknowledged write to s.
func (l *Ledger) Ack(s Stream, evs ...Acked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.streams[s] = append(l.streams[s], evs...)
}

// AckImplied records that an acknowledged write implied one event referring to ref.
func (l *Ledger) AckImplied(ref string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.implied[ref]++
}

// Snapshot copies what was acknowledged so far: the events by stream and the implied events by
// reference. Writes acknowledged later are not in it, so a check may run while workers write.
func (l *Ledger) Snapshot() (map[Stream][]Acked, map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	streams := make(map[Stream][]Acked, len(l.streams))
	for s, evs := range l.streams {
		streams[s] = append([]Acked(nil), evs...)
	}
	implied := make(map[string]int, len(l.implied))
	for r, n := range l.implied {
		implied[r] = n
	}
	return streams, implied
}

// NonceField is the data field that makes every write's data unique.
const NonceField = "n"

// CheckStream checks the events read back from s against those acknowledged: each acknowledged
// stream id is present with the data sent (ErrLost), and no nonce appears twice (ErrDuplicate).
// Events that were written but never acknowledged (a crash before the answer) are allowed.
func CheckStream(s Stream, acked []Acked, got []Event) error {
	byID := make(map[string]json.RawMessage, len(got))
	nonces := make(map[string]string, len(got))
	for _, ev := range got {
		byID[ev.StreamID] = ev.Data
		var d map[string]any
		if json.Unmarshal(ev.Data, &d) != nil {
			continue
		}
		n, ok := d[NonceField].(string)
		if !ok {
			continue
		}
		if first, seen := nonces[n]; seen {
			return fmt.Errorf("%w: %s: nonce %q at %s and %s", ErrDuplicate, s, n, first, ev.StreamID)
		}
		nonces[n] = ev.StreamID
	}
	for _, a := range acked {
		data, ok := byID[a.StreamID]
		if !ok {
			return fmt.Errorf("%w: %s: event %s (of %d acknowledged, %d read) is missing", ErrLost, s, a.StreamID, len(acked), len(got))
		}
		if !sameJSON(data, a.Data) {
			return fmt.Errorf("%w: %s: event %s holds %s, want %s", ErrLost, s, a.StreamID, data, a.Data)
		}
	}
	return nil
}

// CheckImplied checks the events of the stream implied events go to: for each reference, at
// least as many events carry it in field as writes implying it were acknowledged.
func CheckImplied(want map[string]int, got []Event, field string) error {
	have := map[string]int{}
	for _, ev := range got {
		var d map[string]any
		if json.Unmarshal(ev.Data, &d) != nil {
			continue
		}
		if ref, ok := d[field].(string); ok {
			have[ref]++
		}
	}
	for ref, n := range want {
		if have[ref] < n {
			return fmt.Errorf("%w: %d implied events refer to %s, want at least %d", ErrLost, have[ref], ref, n)
		}
	}
	return nil
}

func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
