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
// It costs one hash per leaf; NewTree answers many proofs over the same leaves for that cost once.
func Proof(leaves []Hash, index int) ([]Hash, error) {
	return NewTree(leaves).Proof(index)
}

// Tree is the RFC 6962 tree over a list of leaves with every inner node kept, so that each proof
// is read from it rather than rehashed. Immutable once built; safe for concurrent use.
type Tree struct {
	size  int
	root  *treeNode
	nodes []treeNode // backing store of every node; root is &nodes[0] when size > 0
}

// treeNode is the subtree over leaves [lo, hi).
type treeNode struct {
	lo, hi      int
	hash        Hash
	left, right *treeNode
}

// NewTree hashes leaves into their RFC 6962 tree: 2n-1 nodes for n leaves.
func NewTree(leaves []Hash) *Tree {
	t := &Tree{size: len(leaves)}
	if len(leaves) == 0 {
		return t
	}
	t.nodes = make([]treeNode, 0, 2*len(leaves)-1)
	t.root = t.build(leaves, 0, len(leaves))
	return t
}

// build makes the subtree over leaves [lo, hi), splitting at the largest power of two below its
// size as RFC 6962's MTH does.
func (t *Tree) build(leaves []Hash, lo, hi int) *treeNode {
	t.nodes = append(t.nodes, treeNode{lo: lo, hi: hi})
	n := &t.nodes[len(t.nodes)-1]
	if hi-lo == 1 {
		n.hash = LeafHash(leaves[lo])
		return n
	}
	k := lo + split(hi-lo)
	n.left, n.right = t.build(leaves, lo, k), t.build(leaves, k, hi)
	n.hash = NodeHash(n.left.hash, n.right.hash)
	return n
}

// Size is the number of leaves.
func (t *Tree) Size() int { return t.size }

// Root is the tree hash; EmptyRoot for no leaves.
func (t *Tree) Root() Hash {
	if t.root == nil {
		return EmptyRoot
	}
	return t.root.hash
}

// Proof returns RFC 6962's PATH(index, D[n]): the sibling of every node from the leaf up.
func (t *Tree) Proof(index int) ([]Hash, error) {
	if index < 0 || index >= t.size {
		return nil, fmt.Errorf("%w: %d of %d", ErrIndexOutOfRange, index, t.size)
	}
	var path []Hash
	for n := t.root; n.left != nil; {
		if index < n.left.hi {
			path = append(path, n.right.hash)
			n = n.left
		} else {
			path = append(path, n.left.hash)
			n = n.right
		}
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path, nil
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
