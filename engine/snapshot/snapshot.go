package snapshot

import (
	"fmt"

	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/tick"
)

// DefaultEvery is the snapshot interval when none is configured.
const DefaultEvery = 1000

// Policy decides when a read saves a snapshot.
type Policy struct {
	// Every is the number of events after which a new snapshot is saved; 0 means DefaultEvery.
	Every uint64
}

func (p Policy) every() uint64 {
	if p.Every == 0 {
		return DefaultEvery
	}
	return p.Every
}

// Due reports whether a state at length, replayed from a snapshot at base, should be saved.
func (p Policy) Due(base, length uint64) bool {
	return length >= base+p.every()
}

// Load returns the usable snapshot of a stream: its state and length. ok is false when there is
// none, when it was made under another fingerprint, or when it does not parse. The state is read
// with tick.ParseState, so its arrays and objects stay text until something needs them.
func Load(st storage.EventStore, k storage.StreamKey, fingerprint uint64) (state tick.Value, length uint64, ok bool, err error) {
	snap, found, err := st.GetSnapshot(k)
	if err != nil || !found || snap.SpecVersion != fingerprint {
		return tick.Value{}, 0, false, err
	}
	v, perr := tick.ParseState(snap.State)
	if perr != nil {
		return tick.Value{}, 0, false, nil
	}
	return v, snap.Length, true, nil
}

// Save stores state as the snapshot of a stream at length.
func Save(st storage.EventStore, k storage.StreamKey, fingerprint, length uint64, state []byte) error {
	if err := st.PutSnapshot(k, storage.Snapshot{Length: length, SpecVersion: fingerprint, State: state}); err != nil {
		return fmt.Errorf("snapshot of %s: %w", k, err)
	}
	return nil
}
