package merkle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
)

// mth is RFC 6962's MTH written as the RFC states it, as the reference for Root.
func mth(leaves []Hash) Hash {
	switch n := len(leaves); n {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return sha256.Sum256(append([]byte{0}, leaves[0][:]...))
	default:
		k := 1
		for k<<1 < n {
			k <<= 1
		}
		l, r := mth(leaves[:k]), mth(leaves[k:])
		return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
	}
}

func leavesN(n int) []Hash {
	out := make([]Hash, n)
	for i := range out {
		out[i] = sha256.Sum256([]byte(fmt.Sprintf("event %d", i)))
	}
	return out
}

func TestRootMatchesRFC6962(t *testing.T) {
	for n := 0; n <= 33; n++ {
		leaves := leavesN(n)
		if got, want := Root(leaves), mth(leaves); got != want {
			t.Fatalf("n=%d: got %x, want %x", n, got, want)
		}
	}
}

func TestEmptyRoot(t *testing.T) {
	want := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if got := hex.EncodeToString(EmptyRoot[:]); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestProofsVerify(t *testing.T) {
	for n := 1; n <= 33; n++ {
		leaves := leavesN(n)
		root := Root(leaves)
		for i := range leaves {
			p, err := Proof(leaves, i)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyProof(leaves[i], i, n, p, root); err != nil {
				t.Fatalf("n=%d i=%d: got %v, want valid", n, i, err)
			}
			if err := VerifyProof(leaves[(i+1)%n], i, n, p, root); n > 1 && !errors.Is(err, ErrProofInvalid) {
				t.Fatalf("n=%d i=%d: wrong leaf: got %v, want ErrProofInvalid", n, i, err)
			}
			if len(p) > 0 {
				bad := append([]Hash(nil), p...)
				bad[0][0] ^= 1
				if err := VerifyProof(leaves[i], i, n, bad, root); !errors.Is(err, ErrProofInvalid) {
					t.Fatalf("n=%d i=%d: tampered path: got %v, want ErrProofInvalid", n, i, err)
				}
			}
			if err := VerifyProof(leaves[i], i, n, append(p, Hash{}), root); !errors.Is(err, ErrProofInvalid) {
				t.Fatalf("n=%d i=%d: overlong path: got %v, want ErrProofInvalid", n, i, err)
			}
		}
	}
}

func TestProofOutOfRange(t *testing.T) {
	if _, err := Proof(leavesN(3), 3); !errors.Is(err, ErrIndexOutOfRange) {
		t.Fatalf("got %v, want ErrIndexOutOfRange", err)
	}
	if err := VerifyProof(Hash{}, 5, 5, nil, Hash{}); !errors.Is(err, ErrIndexOutOfRange) {
		t.Fatalf("got %v, want ErrIndexOutOfRange", err)
	}
}

func TestChain(t *testing.T) {
	contents := leavesN(4)
	chain := Chain(contents)
	h := Hash{}
	for i, c := range contents {
		h = sha256.Sum256(append(append([]byte(nil), h[:]...), c[:]...))
		if chain[i] != h {
			t.Fatalf("h_%d: got %x, want %x", i+1, chain[i], h)
		}
	}
	if got := VerifyChain(contents, chain); got != -1 {
		t.Fatalf("intact chain: got first bad %d, want -1", got)
	}
	chain[2][0] ^= 1
	if got := VerifyChain(contents, chain); got != 2 {
		t.Fatalf("tampered chain: got first bad %d, want 2", got)
	}
	if got := VerifyChain(contents, chain[:2]); got != 2 {
		t.Fatalf("short chain: got first bad %d, want 2", got)
	}
}

func TestAnchorRootOrderIndependentAndKeyBound(t *testing.T) {
	a := StreamRoot{Key: "user:alice", Root: sha256.Sum256([]byte("a"))}
	b := StreamRoot{Key: "user:bob", Root: sha256.Sum256([]byte("b"))}
	if AnchorRoot([]StreamRoot{a, b}) != AnchorRoot([]StreamRoot{b, a}) {
		t.Fatal("anchor root depends on input order")
	}
	swapped := []StreamRoot{{Key: a.Key, Root: b.Root}, {Key: b.Key, Root: a.Root}}
	if AnchorRoot([]StreamRoot{a, b}) == AnchorRoot(swapped) {
		t.Fatal("anchor root does not bind keys to roots")
	}
	if got, want := AnchorRoot([]StreamRoot{a, b}), Root([]Hash{AnchorLeaf(a), AnchorLeaf(b)}); got != want {
		t.Fatalf("got %x, want %x", got, want)
	}
}

func BenchmarkRoot(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("leaves=%d", n), func(b *testing.B) {
			leaves := leavesN(n)
			b.ReportAllocs()
			for b.Loop() {
				Root(leaves)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/leaf")
		})
	}
}
