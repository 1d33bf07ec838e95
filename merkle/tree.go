package merkle

import (
	"crypto/sha256"
	"fmt"
)

// LeafHash is the RFC 6962 leaf node over a 32-byte leaf: SHA-256(0x00 || leaf).
func LeafHash(leaf Hash) Hash {
	var buf [33]byte
	copy(buf[1:], leaf[:])
	return sha256.Sum256(buf[:])
}

// NodeHash is the RFC 6962 inner node: SHA-256(0x01 || left || right).
func NodeHash(left, right Hash) Hash {
	var buf [65]byte
	buf[0] = 1
	copy(buf[1:33], left[:])
	copy(buf[33:], right[:])
	return sha256.Sum256(buf[:])
}

// EmptyRoot is the root of a tree with no leaves, SHA-256 of the empty string.
var EmptyRoot = sha256.Sum256(nil)

// Root returns the RFC 6962 Merkle tree hash over leaves.
func Root(leaves []Hash) Hash {
	if len(leaves) == 0 {
		return EmptyRoot
	}
	level := make([]Hash, len(leaves))
	for i, l := range leaves {
		level[i] = LeafHash(l)
	}
	// Pairing left to right and carrying an odd last node up unchanged builds exactly the RFC 6962
	// tree, whose left subtree is always the largest power of two.
	for len(level) > 1 {
		next := level[:0:0]
		for i := 0; i+1 < len(level); i += 2 {
			next = append(next, NodeHash(level[i], level[i+1]))
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	return level[0]
}

// Proof returns the inclusion proof (audit path) for leaf index of leaves, from the leaf level up.
func Proof(leaves []Hash, index int) ([]Hash, error) {
	if index < 0 || index >= len(leaves) {
		return nil, fmt.Errorf("%w: %d of %d", ErrIndexOutOfRange, index, len(leaves))
	}
	nodes := make([]Hash, len(leaves))
	for i, l := range leaves {
		nodes[i] = LeafHash(l)
	}
	return path(nodes, index), nil
}

// path is RFC 6962's PATH(m, D[n]) over already-hashed leaf nodes.
func path(nodes []Hash, m int) []Hash {
	n := len(nodes)
	if n <= 1 {
		return nil
	}
	k := split(n)
	if m < k {
		return append(path(nodes[:k], m), subtreeRoot(nodes[k:]))
	}
	return append(path(nodes[k:], m-k), subtreeRoot(nodes[:k]))
}

func subtreeRoot(nodes []Hash) Hash {
	if len(nodes) == 1 {
		return nodes[0]
	}
	k := split(len(nodes))
	return NodeHash(subtreeRoot(nodes[:k]), subtreeRoot(nodes[k:]))
}

// split returns the largest power of two smaller than n (n > 1).
func split(n int) int {
	k := 1
	for k<<1 < n {
		k <<= 1
	}
	return k
}

// VerifyProof checks that leaf is at index in a tree of size leaves with the given root.
func VerifyProof(leaf Hash, index, size int, proof []Hash, root Hash) error {
	if index < 0 || index >= size {
		return fmt.Errorf("%w: %d of %d", ErrIndexOutOfRange, index, size)
	}
	fn, sn := uint64(index), uint64(size-1)
	r := LeafHash(leaf)
	for _, p := range proof {
		if sn == 0 {
			return ErrProofInvalid
		}
		if fn&1 == 1 || fn == sn {
			r = NodeHash(p, r)
			if fn&1 == 0 {
				for fn&1 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			r = NodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 || r != root {
		return ErrProofInvalid
	}
	return nil
}
