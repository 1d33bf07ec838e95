package soak

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
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
	Type     string          `json:"type"`
	Data     json.RawMessage `json:"data"`
}

// Ledger remembers every acknowledged write, so that a check can ask for each of them back.
type Ledger struct {
	mu        sync.Mutex
	streams   map[Stream][]Acked
	implied   map[string]int
	scheduled map[Stream][]string
	sagas     []string
}

// NewLedger returns an empty Ledger.
func NewLedger() *Ledger {
	return &Ledger{streams: map[Stream][]Acked{}, implied: map[string]int{}, scheduled: map[Stream][]string{}}
}

// Acks is what was acknowledged up to one moment (Ledger.Snapshot).
type Acks struct {
	// Streams holds the acknowledged events by stream.
	Streams map[Stream][]Acked
	// Implied counts the acknowledged writes that implied an event, by the reference the implied
	// event carries.
	Implied map[string]int
	// Scheduled holds the nonces of the acknowledged writes that scheduled an event, by the
	// stream the scheduled event goes to.
	Scheduled map[Stream][]string
	// Sagas are the acknowledged saga triggers, by the id the saga's events refer to.
	Sagas []string
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

// AckScheduled records that an acknowledged write, whose data carried nonce, scheduled one event
// into the stream to.
func (l *Ledger) AckScheduled(to Stream, nonce string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scheduled[to] = append(l.scheduled[to], nonce)
}

// AckSaga records that an acknowledged write started the saga whose events refer to id.
func (l *Ledger) AckSaga(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sagas = append(l.sagas, id)
}

// Snapshot copies what was acknowledged so far. Writes acknowledged later are not in it, so a
// check may run while workers write.
func (l *Ledger) Snapshot() Acks {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := Acks{
		Streams:   make(map[Stream][]Acked, len(l.streams)),
		Implied:   maps.Clone(l.implied),
		Scheduled: make(map[Stream][]string, len(l.scheduled)),
		Sagas:     slices.Clone(l.sagas),
	}
	for s, evs := range l.streams {
		a.Streams[s] = slices.Clone(evs)
	}
	for s, nonces := range l.scheduled {
		a.Scheduled[s] = slices.Clone(nonces)
	}
	return a
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
	have := countRefs(got, "", field)
	for ref, n := range want {
		if have[ref] < n {
			return fmt.Errorf("%w: %d implied events refer to %s, want at least %d", ErrLost, have[ref], ref, n)
		}
	}
	return nil
}

// CheckScheduled checks the stream scheduled events go to, whose field holds the nonce of the
// write that scheduled them: none fired twice (ErrDuplicate), acknowledged or not, and, with
// settled (every due schedule has fired), each acknowledged one fired (ErrLost).
func CheckScheduled(s Stream, want []string, got []Event, field string, settled bool) error {
	have := countRefs(got, "", field)
	for nonce, n := range have {
		if n > 1 {
			return fmt.Errorf("%w: %s: the event scheduled by %q fired %d times", ErrDuplicate, s, nonce, n)
		}
	}
	if !settled {
		return nil
	}
	for _, nonce := range want {
		if have[nonce] == 0 {
			return fmt.Errorf("%w: %s: the event scheduled by %q never fired (%d of %d fired)", ErrLost, s, nonce, len(have), len(want))
		}
	}
	return nil
}

// CheckSagas checks the stream the sagas report to, each event of type in types carrying its
// saga's id in field: no saga emitted one of them twice (ErrDuplicate), acknowledged or not, and,
// with settled (every acknowledged saga has completed), every acknowledged saga emitted each
// (ErrLost).
func CheckSagas(want []string, got []Event, field string, types []string, settled bool) error {
	for _, typ := range types {
		have := countRefs(got, typ, field)
		for id, n := range have {
			if n > 1 {
				return fmt.Errorf("%w: saga %s emitted %s %d times", ErrDuplicate, id, typ, n)
			}
		}
		if !settled {
			continue
		}
		for _, id := range want {
			if have[id] == 0 {
				return fmt.Errorf("%w: saga %s never emitted %s", ErrLost, id, typ)
			}
		}
	}
	return nil
}

// countRefs counts the events of got, of type typ unless it is empty, by the string in field of
// their data.
func countRefs(got []Event, typ, field string) map[string]int {
	have := map[string]int{}
	for _, ev := range got {
		if typ != "" && ev.Type != typ {
			continue
		}
		var d map[string]any
		if json.Unmarshal(ev.Data, &d) != nil {
			continue
		}
		if ref, ok := d[field].(string); ok {
			have[ref]++
		}
	}
	return have
}

func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
