package idempotency

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/j17-go/j17/storage/canonical"
)

// Space is the record space that holds the markers, keyed by the idempotency key.
const Space = "idempotency"

// TTL is how long a key is remembered after its last use, unless the engine is configured with
// another window.
const TTL = 24 * time.Hour

// Fingerprint is the SHA-256 of the canonical JSON of a request body, so that reordered keys
// and insignificant whitespace do not make another body. A body that is not JSON is hashed as
// its bytes: it fails validation, and failures are never remembered.
func Fingerprint(body []byte) [32]byte {
	c, err := canonical.Canonicalize(body)
	if err != nil {
		return sha256.Sum256(body)
	}
	return sha256.Sum256(c)
}

// Marker is what a successful write remembers of its key.
type Marker struct {
	Hash      [32]byte `json:"-"`
	HashHex   string   `json:"hash"`
	LastUsed  int64    `json:"last_used_ms"`
	Status    int      `json:"status"`
	RequestID string   `json:"request_id"`
	// Type and ID name the written stream; From is the 1-based index of its first event and
	// Count the number of events; Batch tells the two answer shapes apart.
	Type         string `json:"type"`
	ID           string `json:"id"`
	From         uint64 `json:"from"`
	Count        int    `json:"count"`
	Batch        bool   `json:"batch"`
	ImpliedCount int    `json:"implied_count,omitempty"`
}

// Live reports whether the marker is still remembered at now when keys live ttl after their
// last use. A marker that is not live is never replayed and may be deleted.
func (m *Marker) Live(now time.Time, ttl time.Duration) bool {
	return now.Sub(time.UnixMilli(m.LastUsed)) < ttl
}

// Encode returns the marker's stored form.
func (m *Marker) Encode() []byte {
	m.HashHex = hex.EncodeToString(m.Hash[:])
	b, err := json.Marshal(m)
	if err != nil {
		panic("BUG: cannot encode an idempotency marker: " + err.Error())
	}
	return b
}

// Decode reads a stored marker.
func Decode(b []byte) (Marker, error) {
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil {
		return Marker{}, fmt.Errorf("%w: %v", ErrBadMarker, err)
	}
	h, err := hex.DecodeString(m.HashHex)
	if err != nil || len(h) != len(m.Hash) {
		return Marker{}, fmt.Errorf("%w: hash %q", ErrBadMarker, m.HashHex)
	}
	copy(m.Hash[:], h)
	return m, nil
}
