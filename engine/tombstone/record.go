package tombstone

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/storage"
)

// Space is the record space of tombstone records, keyed by tombstone id.
const Space = "tombstones"

// MinGrace is the shortest grace period the server accepts.
const MinGrace = 72 * time.Hour

// Status words, as the Tombstones page spells them.
const (
	StatusPending   = "pending"
	StatusExecuting = "executing"
	StatusCompleted = "completed"
	StatusCancelled = "cancelled"
)

// Action of a rewritten stream in affected_streams.
const ActionTombstoned = "tombstoned"

// Affected is one entry of affected_streams.
type Affected struct {
	Key        string `json:"key"`
	EventCount uint64 `json:"event_count"`
	Action     string `json:"action"`
}

// Tombstone is a tombstone record. Plan and Done record the progress of an execution.
type Tombstone struct {
	ID               string     `json:"tombstone_id"`
	AggregateType    string     `json:"aggregate_type"`
	AggregateID      string     `json:"aggregate_id"`
	Key              string     `json:"key"`
	Status           string     `json:"status"`
	LegalBasis       string     `json:"legal_basis,omitempty"`
	RequestID        string     `json:"request_id,omitempty"`
	RequestedBy      string     `json:"requested_by,omitempty"`
	GracePeriodDays  int        `json:"grace_period_days"`
	CreatedAt        time.Time  `json:"created_at"`
	ExecutableAt     time.Time  `json:"executable_at"`
	CancelledAt      *time.Time `json:"cancelled_at,omitempty"`
	StartedAt        *time.Time `json:"started_at,omitempty"`
	Forced           bool       `json:"forced,omitempty"`
	PreTombstoneRoot string     `json:"pre_tombstone_root,omitempty"`
	Plan             []string   `json:"plan,omitempty"`
	Done             []Affected `json:"done,omitempty"`
	ExecutedAt       *time.Time `json:"executed_at,omitempty"`
	AffectedStreams  []Affected `json:"affected_streams,omitempty"`
}

// Stream is the key of the tombstoned aggregate.
func (t *Tombstone) Stream() storage.StreamKey {
	return storage.StreamKey{Type: t.AggregateType, ID: t.AggregateID}
}

// Request is what creating a tombstone takes.
type Request struct {
	LegalBasis      string
	RequestID       string
	RequestedBy     string
	GracePeriodDays int
}

// Create stores a pending tombstone of stream k, which the caller has checked holds events.
func Create(st storage.EventStore, now time.Time, k storage.StreamKey, req Request) (Tombstone, error) {
	if req.GracePeriodDays < 0 {
		return Tombstone{}, fmt.Errorf("%w: grace_period_days must not be negative", ErrInvalid)
	}
	grace := max(time.Duration(req.GracePeriodDays)*24*time.Hour, MinGrace)
	now = now.UTC().Truncate(time.Second)
	t := Tombstone{
		ID: ident.NewV4(), AggregateType: k.Type, AggregateID: k.ID, Key: k.String(), Status: StatusPending,
		LegalBasis: req.LegalBasis, RequestID: req.RequestID, RequestedBy: req.RequestedBy,
		GracePeriodDays: int(grace / (24 * time.Hour)), CreatedAt: now, ExecutableAt: now.Add(grace),
	}
	return t, put(st, &t)
}

// Get reads one tombstone.
func Get(st storage.EventStore, id string) (Tombstone, error) {
	raw, err := st.Get(Space, id)
	if errors.Is(err, storage.ErrNotFound) {
		return Tombstone{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Tombstone{}, err
	}
	var t Tombstone
	if err := json.Unmarshal(raw, &t); err != nil {
		return Tombstone{}, fmt.Errorf("tombstone: record %s: %w", id, err)
	}
	return t, nil
}

// List returns every tombstone, oldest first.
func List(st storage.EventStore) ([]Tombstone, error) {
	out := []Tombstone{}
	err := st.Scan(Space, "", func(key string, v []byte) error {
		var t Tombstone
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("tombstone: record %s: %w", key, err)
		}
		out = append(out, t)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}

// Cancel cancels a pending tombstone.
func Cancel(st storage.EventStore, now time.Time, id string) (Tombstone, error) {
	t, err := Get(st, id)
	if err != nil {
		return Tombstone{}, err
	}
	if t.Status != StatusPending {
		return Tombstone{}, fmt.Errorf("%w: tombstone %s is %s; only a pending tombstone can be cancelled", ErrState, id, t.Status)
	}
	at := now.UTC().Truncate(time.Second)
	t.Status, t.CancelledAt = StatusCancelled, &at
	return t, put(st, &t)
}

func put(st storage.EventStore, t *Tombstone) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, err = st.Commit(&storage.Record{Puts: []storage.Put{{Space: Space, Key: t.ID, Value: b}}})
	return err
}
