package schedule

import (
	"encoding/json"
	"fmt"

	"github.com/j17-go/j17/engine/implication"
)

// Space is the record space of schedules.
const Space = "scheduled"

// Key prefixes in Space; part of the stored format, do not change.
const (
	prefixRecord   = "s/"
	prefixFired    = "f/"
	prefixCanceled = "c/"
)

// Status words, as the Scheduled Events page spells them.
const (
	Pending    = "pending"
	Fired      = "fired"
	Canceled   = "canceled"
	DeadLetter = "dead_letter"
)

// MaxAttempts is how many failed fires move a schedule to dead_letter.
const MaxAttempts = 10

// Record is one schedule as stored under s/<id>.
type Record struct {
	ID            string                `json:"scheduled_id"`
	AggregateType string                `json:"aggregate_type"`
	AggregateID   string                `json:"aggregate_id"`
	EventType     string                `json:"event_type"`
	Data          json.RawMessage       `json:"data"`
	FireAt        int64                 `json:"fire_at_ms"`
	CreatedAt     int64                 `json:"created_at_ms"`
	SourceType    string                `json:"source_type"`
	SourceID      string                `json:"source_id"`
	ImpliedBy     implication.ImpliedBy `json:"implied_by"`
	CancelOn      []implication.Match   `json:"cancel_on,omitempty"`
	Attempts      int                   `json:"attempts"`
	LastError     string                `json:"last_error,omitempty"`
	Dead          bool                  `json:"dead,omitempty"`
}

// Marker is stored under f/<id> and c/<id>.
type Marker struct {
	At int64 `json:"at_ms"`
	// Reason says what canceled a schedule: the matching event or "operator".
	Reason string `json:"reason,omitempty"`
}

// RecordKey, FiredKey and CanceledKey are the keys of a schedule's entries in Space.
func RecordKey(id string) string   { return prefixRecord + id }
func FiredKey(id string) string    { return prefixFired + id }
func CanceledKey(id string) string { return prefixCanceled + id }

// Encode returns the stored form of r.
func (r *Record) Encode() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic("BUG: schedule record does not encode: " + err.Error())
	}
	return b
}

// DecodeRecord parses a stored Record.
func DecodeRecord(raw []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil || r.ID == "" {
		return nil, fmt.Errorf("%w: %q", ErrCorrupt, raw)
	}
	return &r, nil
}

// Encode returns the stored form of m.
func (m Marker) Encode() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic("BUG: schedule marker does not encode: " + err.Error())
	}
	return b
}
