package merkle

import (
	"crypto/sha256"
	"slices"
	"strings"
)

// StreamRoot is one stream's Merkle root, named by its stream key (e.g. "user:alice").
type StreamRoot struct {
	Key  string
	Root Hash
}

// AnchorRoot returns the root over many stream roots, as a root anchor records it: the RFC 6962
// tree whose leaves, in byte order of the keys, are SHA-256(key || 0x00 || root). Binding the key
// into each leaf means that swapping two streams' roots changes the anchor. The input is not
// modified.
func AnchorRoot(roots []StreamRoot) Hash {
	sorted := slices.Clone(roots)
	slices.SortFunc(sorted, func(a, b StreamRoot) int { return strings.Compare(a.Key, b.Key) })
	leaves := make([]Hash, len(sorted))
	for i, r := range sorted {
		leaves[i] = AnchorLeaf(r)
	}
	return Root(leaves)
}

// AnchorLeaf is the leaf that AnchorRoot uses for one stream root.
func AnchorLeaf(r StreamRoot) Hash {
	h := sha256.New()
	h.Write([]byte(r.Key))
	h.Write([]byte{0})
	h.Write(r.Root[:])
	var out Hash
	h.Sum(out[:0])
	return out
}
