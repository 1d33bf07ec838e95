package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// The frame of one record. These constants are part of the on-disk format; do not change.
const (
	headerSize = 10 // CRC (4) + length (4) + kind (1) + flags (1)

	// flagS2 marks a payload stored compressed with S2 (klauspost/compress/s2, block format).
	flagS2 = 1 << 0
	// knownFlags holds every flag bit a reader understands; a record with another bit set is bad.
	knownFlags = flagS2
)

// MaxPayload is the longest payload Write accepts (before compression). Records larger than a
// segment go alone into their own segment, so the limit also bounds a segment's size.
const MaxPayload = 1 << 30

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// recordCRC is the checksum stored in a header: CRC-32C over the stored payload, then length,
// kind and flags. The position is left out so that compaction can move a record by copying its
// bytes. The payload comes first so that Write can checksum it before taking the lock and add the
// header fields, already in the shared buffer, under it.
func recordCRC(hdr []byte, stored []byte) uint32 {
	return crc32.Update(payloadCRC(stored), crcTable, hdr[4:headerSize])
}

func payloadCRC(stored []byte) uint32 { return crc32.Update(0, crcTable, stored) }

// frame is a decoded header.
type frame struct {
	crc    uint32
	length uint32 // of the stored payload
	kind   uint8
	flags  uint8
}

func (f *frame) size() int64 { return headerSize + int64(f.length) }

// decodeHeader reads the header at the start of b and checks what can be checked without the
// payload. avail is how many bytes the record may span, header included.
func decodeHeader(b []byte, avail int64) (frame, string) {
	if avail < headerSize || len(b) < headerSize {
		return frame{}, "truncated header"
	}
	f := frame{
		crc:    binary.LittleEndian.Uint32(b[0:4]),
		length: binary.LittleEndian.Uint32(b[4:8]),
		kind:   b[8],
		flags:  b[9],
	}
	if f.flags&^knownFlags != 0 {
		return f, "unknown flags"
	}
	if f.length > maxStored {
		return f, "length out of range"
	}
	if f.size() > avail {
		return f, "truncated payload"
	}
	return f, ""
}

// maxStored bounds the stored length of a payload: compression never grows one by more than this
// margin, and anything longer is garbage.
const maxStored = MaxPayload + MaxPayload/16

// checkRecord verifies the record whose header and stored payload are hdr and stored.
func checkRecord(f frame, hdr, stored []byte) string {
	if recordCRC(hdr, stored) != f.crc {
		return "checksum mismatch"
	}
	return ""
}

// validAt reports whether b holds a whole valid record at its start.
func validAt(b []byte) bool {
	f, why := decodeHeader(b, int64(len(b)))
	if why != "" {
		return false
	}
	return checkRecord(f, b[:headerSize], b[headerSize:f.size()]) == ""
}
