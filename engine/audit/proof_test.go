package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/j17-go/j17/merkle"
)

// TestProofSizes checks proofs of trees of every size from 1 to 1,000 at their first, second,
// middle and last two leaves, in the hex form the API answers and takes back.
func TestProofSizes(t *testing.T) {
	leaves := make([]merkle.Hash, 1000)
	for i := range leaves {
		leaves[i] = sha256.Sum256([]byte(strconv.Itoa(i)))
	}
	for n := 1; n <= len(leaves); n++ {
		ls := leaves[:n]
		root := merkle.Root(ls)
		for _, i := range []int{0, 1, n / 2, n - 2, n - 1} {
			if i < 0 || i >= n {
				continue
			}
			path, err := merkle.Proof(ls, i)
			if err != nil {
				t.Fatal(err)
			}
			p := Proof{Index: i, Leaf: hex.EncodeToString(ls[i][:]), Root: hex.EncodeToString(root[:]), TreeSize: n, Path: make([]string, len(path))}
			for j, h := range path {
				p.Path[j] = hex.EncodeToString(h[:])
			}
			if v := VerifyProof(p); !v.Valid {
				t.Fatalf("size=%d index=%d: got %q, want valid", n, i, v.Reason)
			}
			if got := pathLength(i, n); got != len(path) {
				t.Fatalf("size=%d index=%d: pathLength %d, want %d", n, i, got, len(path))
			}
		}
	}
}
