package ident

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewV4 returns a random (version 4) UUID in its canonical lowercase form: the ids the server
// itself gives to instances, keys, operators and tombstones.
func NewV4() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(&b)
}

// NewV7 returns a version 7 UUID: 48 bits of Unix milliseconds, then random bits, so that ids
// made later sort after ids made earlier (to the millisecond).
func NewV7(now time.Time) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	ms := uint64(now.UnixMilli())
	for i := 0; i < 6; i++ {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(&b)
}

// formatUUID writes b in the canonical 8-4-4-4-12 lowercase form.
func formatUUID(b *[16]byte) string {
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
