package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"

	"github.com/j17-go/j17/storage/canonical"
)

// formatVersion changes when the meaning of a stored state changes (the tick semantics or this
// encoding), so that every older snapshot becomes unusable.
const formatVersion = "j17-snapshot-1"

// Fingerprints returns, for every aggregate type of a spec document, the hash of its canonical
// definition: equal definitions give equal fingerprints whatever the key order or the version
// number of the deploy.
func Fingerprints(doc []byte) map[string]uint64 {
	var d struct {
		AggregateTypes map[string]json.RawMessage `json:"aggregate_types"`
	}
	out := map[string]uint64{}
	if err := json.Unmarshal(doc, &d); err != nil {
		return out
	}
	for name, raw := range d.AggregateTypes {
		c, err := canonical.Canonicalize(raw)
		if err != nil {
			c = raw
		}
		h := sha256.New()
		h.Write([]byte(formatVersion))
		h.Write([]byte{0})
		h.Write(c)
		sum := h.Sum(nil)
		out[name] = binary.BigEndian.Uint64(sum)
	}
	return out
}
