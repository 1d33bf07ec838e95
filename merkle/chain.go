package merkle

import "crypto/sha256"

// Hash is a SHA-256 digest.
type Hash = [32]byte

// ChainStart is h_0, the chain value of an empty stream.
var ChainStart Hash

// ChainNext returns h_i = SHA-256(prev || content), the chain value after an event whose own hash
// is content.
func ChainNext(prev, content Hash) Hash {
	var buf [64]byte
	copy(buf[:32], prev[:])
	copy(buf[32:], content[:])
	return sha256.Sum256(buf[:])
}

// Chain returns the chain values h_1..h_n for the given event hashes.
func Chain(contents []Hash) []Hash {
	out := make([]Hash, len(contents))
	h := ChainStart
	for i, c := range contents {
		h = ChainNext(h, c)
		out[i] = h
	}
	return out
}

// VerifyChain recomputes the chain over contents and compares it with chain. It returns the 0-based
// index of the first value that differs, or -1 when every value matches.
func VerifyChain(contents, chain []Hash) int {
	h := ChainStart
	for i, c := range contents {
		h = ChainNext(h, c)
		if i >= len(chain) || chain[i] != h {
			return i
		}
	}
	if len(chain) > len(contents) {
		return len(contents)
	}
	return -1
}
