package audit

import (
	"encoding/hex"
	"fmt"

	"github.com/j17-go/j17/merkle"
	"github.com/j17-go/j17/storage"
)

// ChainReport is the answer of verify-chain. FirstBadIndex is the 0-based index of the first
// event whose stored chain value differs from the recomputed one; nil when the chain verifies.
type ChainReport struct {
	Valid         bool    `json:"valid"`
	Length        uint64  `json:"length"`
	FirstBadIndex *uint64 `json:"first_bad_index,omitempty"`
}

// VerifyChain recomputes a stream's chain from its stored events.
func VerifyChain(st storage.EventStore, k storage.StreamKey) (ChainReport, error) {
	n, err := st.Length(k)
	if err != nil {
		return ChainReport{}, err
	}
	if n == 0 {
		return ChainReport{}, fmt.Errorf("%w: stream %s has no events", ErrNotFound, k)
	}
	bad, err := st.VerifyStream(k)
	if err != nil {
		return ChainReport{}, err
	}
	rep := ChainReport{Valid: bad == 0, Length: n}
	if bad > 0 {
		i := bad - 1
		rep.FirstBadIndex = &i
	}
	return rep, nil
}

// RootReport is the answer of merkle-root.
type RootReport struct {
	Root   string `json:"root"`
	Length uint64 `json:"length"`
}

// Root returns a stream's Merkle root over its chain values.
func Root(st storage.EventStore, k storage.StreamKey) (RootReport, error) {
	leaves, err := leaves(st, k)
	if err != nil {
		return RootReport{}, err
	}
	r := merkle.Root(leaves)
	return RootReport{Root: hex.EncodeToString(r[:]), Length: uint64(len(leaves))}, nil
}

func leaves(st storage.EventStore, k storage.StreamKey) ([]merkle.Hash, error) {
	hs, err := st.Hashes(k)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("%w: stream %s has no events", ErrNotFound, k)
	}
	return hs, nil
}

// Proof is an inclusion proof of one event, as merkle-proof answers it and merkle-verify takes it
// back. Leaf is the event's chain value; Path runs from the leaf level up.
type Proof struct {
	Index    int      `json:"index"`
	Leaf     string   `json:"leaf"`
	Path     []string `json:"path"`
	Root     string   `json:"root"`
	TreeSize int      `json:"tree_size"`
}

// ProveEvent returns the inclusion proof of the event at 0-based index in the stream's current
// tree.
func ProveEvent(st storage.EventStore, k storage.StreamKey, index int) (Proof, error) {
	ls, err := leaves(st, k)
	if err != nil {
		return Proof{}, err
	}
	if index < 0 || index >= len(ls) {
		return Proof{}, fmt.Errorf("%w: %d of a stream of %d events", ErrIndexOutOfRange, index, len(ls))
	}
	path, err := merkle.Proof(ls, index)
	if err != nil {
		return Proof{}, err
	}
	root := merkle.Root(ls)
	p := Proof{Index: index, Leaf: hex.EncodeToString(ls[index][:]), Path: make([]string, len(path)), Root: hex.EncodeToString(root[:]), TreeSize: len(ls)}
	for i, h := range path {
		p.Path[i] = hex.EncodeToString(h[:])
	}
	return p, nil
}

// Verdict is the answer of merkle-verify: Reason says why a proof fails.
type Verdict struct {
	Valid  bool   `json:"valid"`
	Reason string `json:"reason,omitempty"`
}

// VerifyProof checks a proof on its own: the leaf, climbed along the path, must give the root.
func VerifyProof(p Proof) Verdict {
	leaf, ok := hash32(p.Leaf)
	if !ok {
		return Verdict{Reason: "leaf is not a 64-digit hex SHA-256 hash"}
	}
	root, ok := hash32(p.Root)
	if !ok {
		return Verdict{Reason: "root is not a 64-digit hex SHA-256 hash"}
	}
	if p.TreeSize <= 0 {
		return Verdict{Reason: "tree_size must be at least 1"}
	}
	if p.Index < 0 || p.Index >= p.TreeSize {
		return Verdict{Reason: fmt.Sprintf("index %d is outside a tree of %d leaves", p.Index, p.TreeSize)}
	}
	path := make([]merkle.Hash, len(p.Path))
	for i, s := range p.Path {
		h, ok := hash32(s)
		if !ok {
			return Verdict{Reason: fmt.Sprintf("path[%d] is not a 64-digit hex SHA-256 hash", i)}
		}
		path[i] = h
	}
	if want := pathLength(p.Index, p.TreeSize); len(path) != want {
		return Verdict{Reason: fmt.Sprintf("path has %d hashes; a proof of index %d in a tree of %d leaves has %d", len(path), p.Index, p.TreeSize, want)}
	}
	if err := merkle.VerifyProof(leaf, p.Index, p.TreeSize, path, root); err != nil {
		return Verdict{Reason: "the leaf and path do not lead to the root"}
	}
	return Verdict{Valid: true}
}

// VerifyProofFor checks a proof and, when it holds, that its root is the stream's root over its
// first tree_size events: a self-consistent proof of another tree does not verify.
func VerifyProofFor(st storage.EventStore, k storage.StreamKey, p Proof) (Verdict, error) {
	v := VerifyProof(p)
	if !v.Valid {
		return v, nil
	}
	ls, err := leaves(st, k)
	if err != nil {
		return Verdict{}, err
	}
	if p.TreeSize > len(ls) {
		return Verdict{Reason: fmt.Sprintf("tree_size %d exceeds the stream's %d events", p.TreeSize, len(ls))}, nil
	}
	root := merkle.Root(ls[:p.TreeSize])
	if hex.EncodeToString(root[:]) != p.Root {
		return Verdict{Reason: fmt.Sprintf("root is not the stream's root over its first %d events", p.TreeSize)}, nil
	}
	return v, nil
}

// pathLength is the length of RFC 6962's PATH(m, D[n]).
func pathLength(m, n int) int {
	l := 0
	for n > 1 {
		k := 1
		for k<<1 < n {
			k <<= 1
		}
		if m < k {
			n = k
		} else {
			m, n = m-k, n-k
		}
		l++
	}
	return l
}

// hash32 decodes a lowercase 64-digit hex hash.
func hash32(s string) (merkle.Hash, bool) {
	var h merkle.Hash
	if len(s) != 64 {
		return h, false
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, false
	}
	return h, hex.EncodeToString(h[:]) == s
}
