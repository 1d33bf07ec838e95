package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/tick"
)

// CheckpointSpace is the record space of checkpoints: "h/<id>" holds a checkpoint's header and
// "m/<id>/<aggregate id>" the state of each aggregate it covers.
const CheckpointSpace = "checkpoints"

// Checkpoint describes one checkpoint.
type Checkpoint struct {
	ID            string `json:"checkpoint_id"`
	AggregateType string `json:"aggregate_type"`
	// AggregateID is empty for a root checkpoint, which covers every aggregate of the type.
	AggregateID string `json:"aggregate_id,omitempty"`
	Root        bool   `json:"root"`
	Count       int    `json:"count"`
	CreatedAt   int64  `json:"created_at"`
	// Handlers is the fingerprint of the aggregate type's definition at creation, in hex.
	Handlers string `json:"handlers"`
}

// Member is the state of one aggregate in a checkpoint.
type Member struct {
	ID     string          `json:"aggregate_id"`
	Length uint64          `json:"length"`
	State  json.RawMessage `json:"state"`
}

func headerKey(id string) string     { return "h/" + id }
func memberPrefix(id string) string  { return "m/" + id + "/" }
func fingerprintHex(f uint64) string { return strconv.FormatUint(f, 16) }
func newCheckpointID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	return "cp_" + strconv.FormatInt(now.UnixMilli(), 10) + "_" + hex.EncodeToString(b[:])
}

// CreateCheckpoint stores a checkpoint of the given aggregates of one type in one commit. id is
// "" for a root checkpoint of the whole type.
func CreateCheckpoint(st storage.EventStore, now time.Time, aggType, id string, fingerprint uint64, members []Member) (Checkpoint, error) {
	cp := Checkpoint{
		ID: newCheckpointID(now), AggregateType: aggType, AggregateID: id, Root: id == "",
		Count: len(members), CreatedAt: now.Unix(), Handlers: fingerprintHex(fingerprint),
	}
	head, err := json.Marshal(cp)
	if err != nil {
		return Checkpoint{}, err
	}
	rec := &storage.Record{Puts: []storage.Put{{Space: CheckpointSpace, Key: headerKey(cp.ID), Value: head}}}
	for _, m := range members {
		b, err := json.Marshal(m)
		if err != nil {
			return Checkpoint{}, err
		}
		rec.Puts = append(rec.Puts, storage.Put{Space: CheckpointSpace, Key: memberPrefix(cp.ID) + m.ID, Value: b})
	}
	if _, err := st.Commit(rec); err != nil {
		return Checkpoint{}, fmt.Errorf("create checkpoint: %w", err)
	}
	return cp, nil
}

// Checkpoints lists the checkpoints in id order, which is creation order.
func Checkpoints(st storage.EventStore) ([]Checkpoint, error) {
	out := []Checkpoint{}
	err := st.Scan(CheckpointSpace, "h/", func(_ string, v []byte) error {
		var cp Checkpoint
		if err := json.Unmarshal(v, &cp); err != nil {
			return fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
		}
		out = append(out, cp)
		return nil
	})
	return out, err
}

// GetCheckpoint returns one checkpoint's header.
func GetCheckpoint(st storage.EventStore, id string) (Checkpoint, error) {
	if !validCheckpointID(id) {
		return Checkpoint{}, fmt.Errorf("%w: %q", ErrCheckpointNotFound, id)
	}
	v, err := st.Get(CheckpointSpace, headerKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return Checkpoint{}, fmt.Errorf("%w: %q", ErrCheckpointNotFound, id)
	}
	if err != nil {
		return Checkpoint{}, err
	}
	var cp Checkpoint
	if err := json.Unmarshal(v, &cp); err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
	}
	return cp, nil
}

// RestoreCheckpoint makes the checkpoint's states the snapshots of their streams, provided the
// aggregate type's definition is still the one it was made with. It returns how many states
// were restored; a state longer than its stream (a stream since erased) is skipped.
func RestoreCheckpoint(st storage.EventStore, id string, fingerprint uint64) (int, error) {
	cp, err := GetCheckpoint(st, id)
	if err != nil {
		return 0, err
	}
	if cp.Handlers != fingerprintHex(fingerprint) {
		return 0, fmt.Errorf("%w: checkpoint %q", ErrStale, id)
	}
	n := 0
	err = st.Scan(CheckpointSpace, memberPrefix(id), func(_ string, v []byte) error {
		var m Member
		if err := json.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
		}
		k := storage.StreamKey{Type: cp.AggregateType, ID: m.ID}
		length, err := st.Length(k)
		if err != nil {
			return err
		}
		if m.Length > length {
			return nil
		}
		// A snapshot holds the state as AppendJSON writes it, since reads copy its text out
		// verbatim (see Load); the member's copy went through encoding/json, which escapes
		// "<", ">", "&" and two line separators.
		state, err := tick.ParseJSON(m.State)
		if err != nil {
			return fmt.Errorf("%w: state of %s: %v", ErrBadCheckpoint, m.ID, err)
		}
		n++
		return Save(st, k, fingerprint, m.Length, state.AppendJSON(nil))
	})
	return n, err
}

// DeleteCheckpoint removes a checkpoint from the record space in one commit. Snapshots it
// restored stay: they are valid states of their streams.
func DeleteCheckpoint(st storage.EventStore, id string) error {
	if _, err := GetCheckpoint(st, id); err != nil {
		return err
	}
	rec := &storage.Record{Deletes: []storage.Delete{{Space: CheckpointSpace, Key: headerKey(id)}}}
	err := st.Scan(CheckpointSpace, memberPrefix(id), func(key string, _ []byte) error {
		rec.Deletes = append(rec.Deletes, storage.Delete{Space: CheckpointSpace, Key: key})
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := st.Commit(rec); err != nil {
		return fmt.Errorf("delete checkpoint: %w", err)
	}
	return nil
}

// validCheckpointID keeps ids to the shape newCheckpointID makes, so that an id from a URL can
// never reach into another checkpoint's keys.
func validCheckpointID(id string) bool {
	return strings.HasPrefix(id, "cp_") && !strings.ContainsAny(id, "/\x00")
}
