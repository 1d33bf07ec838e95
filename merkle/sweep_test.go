package merkle

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"
)

// TestEveryProofOfEverySizeUpTo1000 builds the tree of every size from 1 to 1,000 and checks the
// proof of every leaf: it verifies against the root computed by Root (pairing level by level, an
// independent construction), and changing any one byte of it - a byte of a path node, of the
// leaf or of the root - makes it fail. Which byte changes varies with the size and the index, so
// across the sweep every byte position of every path depth is changed.
func TestEveryProofOfEverySizeUpTo1000(t *testing.T) {
	const max = 1000
	all := make([]Hash, max)
	for i := range all {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i))
		all[i] = sha256.Sum256(b[:])
	}
	proofs := 0
	for n := 1; n <= max; n++ {
		leaves := all[:n]
		tree := NewTree(leaves)
		root := Root(leaves)
		if tree.Root() != root {
			t.Fatalf("size %d: tree root %x, want %x", n, tree.Root(), root)
		}
		for i := 0; i < n; i++ {
			path, err := tree.Proof(i)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyProof(leaves[i], i, n, path, root); err != nil {
				t.Fatalf("size %d index %d: got %v, want valid", n, i, err)
			}
			proofs++
			pos := (n*31 + i) % 32
			if len(path) > 0 {
				bad := append([]Hash(nil), path...)
				bad[(n+i)%len(bad)][pos] ^= 0x01
				if err := VerifyProof(leaves[i], i, n, bad, root); !errors.Is(err, ErrProofInvalid) {
					t.Fatalf("size %d index %d: changed path byte: got %v, want ErrProofInvalid", n, i, err)
				}
			}
			leaf, badRoot := leaves[i], root
			leaf[pos] ^= 0x80
			badRoot[pos] ^= 0x80
			if err := VerifyProof(leaf, i, n, path, root); !errors.Is(err, ErrProofInvalid) {
				t.Fatalf("size %d index %d: changed leaf byte: got %v, want ErrProofInvalid", n, i, err)
			}
			if err := VerifyProof(leaves[i], i, n, path, badRoot); !errors.Is(err, ErrProofInvalid) {
				t.Fatalf("size %d index %d: changed root byte: got %v, want ErrProofInvalid", n, i, err)
			}
		}
	}
	if proofs != max*(max+1)/2 {
		t.Fatalf("checked %d proofs, want %d", proofs, max*(max+1)/2)
	}
}
