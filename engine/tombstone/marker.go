package tombstone

import (
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/j17-go/j17/storage"
)

// MarkerType is the event type that replaces every erased event.
const MarkerType = "_was_tombstoned"

// Marker is the data of a "_was_tombstoned" event.
type Marker struct {
	OriginalHash string `json:"original_hash"`
	ChainHash    string `json:"chain_hash"`
	OriginalType string `json:"original_type"`
	TombstoneID  string `json:"tombstone_id"`
	TombstonedAt string `json:"tombstoned_at"`
}

// markerMeta is the marker's metadata: the system actor and the erasure time.
type markerMeta struct {
	Actor     ref   `json:"actor"`
	Timestamp int64 `json:"timestamp"`
}

// ParseMarker returns the marker data of ev, and false when ev is not a marker.
func ParseMarker(ev storage.Event) (Marker, bool) {
	if ev.Type != MarkerType {
		return Marker{}, false
	}
	var m Marker
	if json.Unmarshal(ev.Data, &m) != nil {
		return Marker{}, false
	}
	return m, true
}

// Replace returns the marker that erases ev. original_hash is the event's content hash
// (storage.ContentHash: SHA-256 of its canonical JSON) and chain_hash its chain value before the
// rewrite. A marker is returned unchanged, so erasing an erased stream again is a no-op.
func Replace(ev storage.Event, tombstoneID string, at time.Time) (storage.NewEvent, error) {
	if ev.Type == MarkerType {
		return storage.NewEvent{Type: ev.Type, Data: ev.Data, Metadata: ev.Metadata, Timestamp: ev.Timestamp}, nil
	}
	orig := storage.ContentHash(ev.Stream, ev.Type, ev.Data, ev.Metadata)
	data, err := json.Marshal(Marker{
		OriginalHash: hex.EncodeToString(orig[:]), ChainHash: hex.EncodeToString(ev.Hash[:]),
		OriginalType: ev.Type, TombstoneID: tombstoneID, TombstonedAt: at.UTC().Format(time.RFC3339),
	})
	if err != nil {
		return storage.NewEvent{}, err
	}
	meta, err := json.Marshal(markerMeta{Actor: ref{Type: "system", ID: "system"}, Timestamp: at.Unix()})
	if err != nil {
		return storage.NewEvent{}, err
	}
	return storage.NewEvent{Type: MarkerType, Data: data, Metadata: meta, Timestamp: at.Unix()}, nil
}
