package storage

import (
	"encoding/binary"
	"fmt"
)

// Log record kind used for every storage record. Part of the on-disk format; do not change.
const kindRecord uint8 = 1

// recordVersion is the first byte of every record payload. Part of the on-disk format.
const recordVersion = 1

// The payload of a log record (integers little-endian; uv = uvarint; str = uv length + bytes):
//
//	+---------+----------+----------+-----------------------+---------+-------+----------+
//	| ver 1B  | lsn 8B   | eff 8B   | uv n, n x uv lsn      | groups  | puts  | deletes  |
//	+---------+----------+----------+-----------------------+---------+-------+----------+
//	                                  (superseded records)
//	group:  str type | str id | first index 8B | uv count | count x event
//	event:  sid ms 8B | sid seq 8B | timestamp 8B | str type | str data | str metadata | hash 32B
//	puts:   uv count | count x (str space | str key | str value)
//	deletes: uv count | count x (str space | str key)
//
// lsn is the record's own sequence number, unique and increasing in log order. eff is the
// sequence number whose effects the record carries: equal to lsn, except for a carry record (a
// copy of the still-current content of a record that compaction is about to drop), whose eff is
// the dropped record's. When two records set the same event slot or record-space key, the one with
// the larger eff wins, and on a tie the later one. Fixed-width fields are patched in place after
// encoding, under the commit lock.

// record is a decoded payload. Its byte slices point into the payload.
type record struct {
	lsn, eff   uint64
	superseded []uint64
	groups     []recGroup
	puts       []Put
	// spaceKeys, when the commit path made the record, holds for each put its space, a NUL byte
	// and its key (spaceKeyString), the put's Key being a slice of it: the overlay's key, built
	// once with the key instead of again when the record is published. Not encoded: nil when
	// decoded.
	spaceKeys []string
	deletes   []Delete
	size      int // the payload's capacity, which its slices keep alive: for cache accounting
	// cost is what the record cache counted for it (cost), protected by the lock of its shard.
	cost int64
}

type recGroup struct {
	stream StreamKey
	first  uint64 // index of the group's first event in its stream
	events []recEvent
	// fresh is set by the commit path when the stream had no head anywhere, so no earlier record
	// touched it and the indexer need not look its head up. Not encoded: false when decoded.
	fresh bool
	// hash is the stream's knownStreams.hashKey, set by the commit path, which computes it
	// anyway. Not encoded: 0 when decoded, and the indexer then hashes the stream itself.
	hash uint64
}

type recEvent struct {
	sid  StreamID
	ts   int64
	typ  string
	data []byte
	meta []byte
	hash [32]byte
}

// recordOffsets locates the patchable fields of an encoded payload.
type recordOffsets struct {
	groups []int // offset of each group's first-index field
	events []int // offset of each event's sid field, in record order
	hashes []int // offset of each event's hash field, in record order
	puts   []int // offset of each ordered put's timestamp digits (see Put.Stream), in put order
}

const headerSize = 1 + 8 + 8

func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// encodedSize is an upper bound of the encoded length of r, to size the buffer once.
func (r *record) encodedSize() int {
	n := headerSize + 10 + 10*len(r.superseded) + 30
	for _, g := range r.groups {
		n += 30 + len(g.stream.Type) + len(g.stream.ID)
		for _, e := range g.events {
			n += 24 + 32 + 30 + len(e.typ) + len(e.data) + len(e.meta)
		}
	}
	for _, p := range r.puts {
		n += 30 + len(p.Space) + len(p.Key) + len(p.Value)
	}
	for _, d := range r.deletes {
		n += 20 + len(d.Space) + len(d.Key)
	}
	return n
}

// marshal appends the payload of r to dst and reports where its patchable fields are.
func (r *record) marshal(dst []byte, offs *recordOffsets) []byte {
	base := len(dst)
	dst = append(dst, recordVersion)
	dst = binary.LittleEndian.AppendUint64(dst, r.lsn)
	dst = binary.LittleEndian.AppendUint64(dst, r.eff)
	dst = binary.AppendUvarint(dst, uint64(len(r.superseded)))
	for _, l := range r.superseded {
		dst = binary.AppendUvarint(dst, l)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.groups)))
	for _, g := range r.groups {
		dst = appendStr(dst, g.stream.Type)
		dst = appendStr(dst, g.stream.ID)
		if offs != nil {
			offs.groups = append(offs.groups, len(dst)-base)
		}
		dst = binary.LittleEndian.AppendUint64(dst, g.first)
		dst = binary.AppendUvarint(dst, uint64(len(g.events)))
		for i := range g.events {
			e := &g.events[i]
			if offs != nil {
				offs.events = append(offs.events, len(dst)-base)
			}
			dst = binary.LittleEndian.AppendUint64(dst, e.sid.Ms)
			dst = binary.LittleEndian.AppendUint64(dst, e.sid.Seq)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(e.ts))
			dst = appendStr(dst, e.typ)
			dst = appendBytes(dst, e.data)
			dst = appendBytes(dst, e.meta)
			if offs != nil {
				offs.hashes = append(offs.hashes, len(dst)-base)
			}
			dst = append(dst, e.hash[:]...)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.puts)))
	for _, p := range r.puts {
		dst = appendStr(dst, p.Space)
		dst = appendStr(dst, p.Key)
		if offs != nil && p.Stream != (StreamKey{}) {
			offs.puts = append(offs.puts, len(dst)-base-len(p.Stream.ID)-orderedKeyTail)
		}
		dst = appendBytes(dst, p.Value)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.deletes)))
	for _, d := range r.deletes {
		dst = appendStr(dst, d.Space)
		dst = appendStr(dst, d.Key)
	}
	return dst
}

// recordLSN reads the lsn of a payload without decoding the rest.
func recordLSN(payload []byte) (uint64, error) {
	if len(payload) < headerSize || payload[0] != recordVersion {
		return 0, fmt.Errorf("%w: bad header", ErrBadRecord)
	}
	return binary.LittleEndian.Uint64(payload[1:]), nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated or malformed", ErrBadRecord)
	}
	d.b = nil
}

func (d *decoder) u64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) uv() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a uvarint count and bounds it by the bytes left, each item taking at least min bytes.
func (d *decoder) count(min int) int {
	v := d.uv()
	if v > uint64(len(d.b)/min) {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) bytes() []byte {
	n := d.uv()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) hash() (h [32]byte) {
	if len(d.b) < 32 {
		d.fail()
		return h
	}
	copy(h[:], d.b)
	d.b = d.b[32:]
	return h
}

// unmarshalRecord decodes a payload. The result's byte slices alias payload.
func unmarshalRecord(payload []byte) (*record, error) {
	if len(payload) < headerSize || payload[0] != recordVersion {
		return nil, fmt.Errorf("%w: bad header", ErrBadRecord)
	}
	d := decoder{b: payload[1:]}
	r := &record{size: cap(payload)}
	r.lsn = d.u64()
	r.eff = d.u64()
	if n := d.count(1); n > 0 {
		r.superseded = make([]uint64, n)
		for i := range r.superseded {
			r.superseded[i] = d.uv()
		}
	}
	r.groups = make([]recGroup, d.count(11))
	for gi := range r.groups {
		g := &r.groups[gi]
		g.stream.Type = string(d.bytes())
		g.stream.ID = string(d.bytes())
		g.first = d.u64()
		g.events = make([]recEvent, d.count(59))
		for i := range g.events {
			e := &g.events[i]
			e.sid.Ms = d.u64()
			e.sid.Seq = d.u64()
			e.ts = int64(d.u64())
			e.typ = string(d.bytes())
			e.data = d.bytes()
			e.meta = d.bytes()
			e.hash = d.hash()
		}
	}
	if n := d.count(3); n > 0 {
		r.puts = make([]Put, n)
		for i := range r.puts {
			r.puts[i] = Put{Space: string(d.bytes()), Key: string(d.bytes()), Value: d.bytes()}
		}
	}
	if n := d.count(2); n > 0 {
		r.deletes = make([]Delete, n)
		for i := range r.deletes {
			r.deletes[i] = Delete{Space: string(d.bytes()), Key: string(d.bytes())}
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, d.err
	}
	return r, nil
}

// putsAny reports whether a payload puts a record-space key for which match holds, skipping
// over the events without decoding them into memory.
func putsAny(payload []byte, match func(space, key []byte) bool) (bool, error) {
	if len(payload) < headerSize || payload[0] != recordVersion {
		return false, fmt.Errorf("%w: bad header", ErrBadRecord)
	}
	d := decoder{b: payload[headerSize:]}
	for n := d.count(1); n > 0; n-- {
		d.uv()
	}
	for g := d.count(11); g > 0; g-- {
		d.bytes()
		d.bytes()
		d.u64()
		for n := d.count(59); n > 0; n-- {
			d.u64()
			d.u64()
			d.u64()
			d.bytes()
			d.bytes()
			d.bytes()
			d.hash()
		}
	}
	found := false
	for n := d.count(3); n > 0 && d.err == nil; n-- {
		space, key := d.bytes(), d.bytes()
		d.bytes()
		found = found || (d.err == nil && match(space, key))
	}
	return found, d.err
}

// eventAt returns the ordinal-th event of the record (counting across groups) and its group.
func (r *record) eventAt(ordinal uint32) (*recGroup, *recEvent, uint64, bool) {
	o := int(ordinal)
	for gi := range r.groups {
		g := &r.groups[gi]
		if o < len(g.events) {
			return g, &g.events[o], g.first + uint64(o), true
		}
		o -= len(g.events)
	}
	return nil, nil, 0, false
}

func (r *record) eventCount() int {
	n := 0
	for _, g := range r.groups {
		n += len(g.events)
	}
	return n
}

// indexEntries is what indexing r puts, as index transactions are bounded by it: the record's
// positions, an entry per event and one per space key.
func (r *record) indexEntries() int {
	return 1 + r.eventCount() + len(r.puts) + len(r.deletes)
}
