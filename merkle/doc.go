// Package merkle holds the hash structures that make an event history verifiable: the per-stream
// SHA-256 hash chain, the RFC 6962 Merkle tree over a list of leaf hashes with inclusion proofs,
// and the root over many stream roots that root anchors record.
//
// Chain: h_0 is 32 zero bytes and h_i = SHA-256(h_{i-1} || c_i), where c_i is the 32-byte hash of
// event i (the caller decides what it hashes; storage uses SHA-256 of the event's canonical JSON).
//
// Tree (RFC 6962 section 2.1): the leaves are 32-byte hashes d_0..d_{n-1}; the leaf node is
// SHA-256(0x00 || d_i), an inner node SHA-256(0x01 || left || right), the split is at the largest
// power of two smaller than n, and the root of the empty tree is SHA-256 of the empty string.
// Proofs are the audit paths of RFC 6962 section 2.1.1, verified as in RFC 9162 section 2.1.3.2.
//
// Every function is pure and safe for concurrent use; nothing here reads the clock or the disk.
package merkle
