package storage

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The index is a bbolt file with these buckets. Part of the on-disk format of index.db; the index
// is derived data, so open rebuilds an index of another format from the log.
//
//	meta       "format" -> indexFormat (8B)
//	           "tails" -> the epochs the tails bucket holds runs of, lo 8B | hi 8B (none when lo > hi)
//	           "state" -> watermark: seg 4B | last applied lsn 8B | last sid ms 8B | seq 8B |
//	           stream numbers handed out 8B | stream numbers whose names are merged 8B
//	headRuns   the number of a run's first stream (8B BE) -> the heads of that stream and of
//	           those the same transaction numbered after it, as many as fit headRunBytes
//	           (head_runs.go): count 4B | end of each head 4B | heads
//	heads      stream number (8B BE) -> head, for a stream whose head changed after the
//	           transaction that numbered it (it takes precedence over the stream's entry in its
//	           run): length 8B | last hash 32B | first ts 8B | last ts 8B | sid 16B | lsn 8B |
//	           [only event's holder lsn 8B | eff 8B | ordinal 4B] | type 0 id (the bracketed part
//	           when length is 1)
//	names      runs: highest stream number of the run (8B BE) -> bucket of chunks: first name of
//	           the chunk (type 0 id) -> names (type 0 id) and stream numbers, in key order
//	           (name_chunks.go); together the streams numbered up to the merged count (also the
//	           listing of a type's ids, in byte order); see name_runs.go
//	events     stream number(8B BE) index(8B BE) -> a run of entries, of that event and of those that
//	           follow it (up to 256; event_runs.go), each holder lsn 8B | eff 8B | ordinal 4B |
//	           sid 16B | ts 8B | hash 32B, for the events of streams of two or more events
//	tails      epoch(8B BE) stream number(8B BE) index(8B BE) -> a run, as in events, appended to a
//	           stream numbered before the transaction of that epoch (tail_runs.go)
//	records    lsn/64 (8B BE) -> 64 positions 8B each (wal.Pos.Uint64; 0: not in the log), see
//	           record_index.go
//	space      space 0 key -> live 1B | eff 8B | holder lsn 8B | value
//	jobs       rewrite lsn(8B BE) -> type 0 id 0 | superseded lsns (8B each) still in the log
//	           (type and id empty for an erasure record of Erase)
//	compacting seg(4B BE) -> lsns (8B each) being dropped from that segment
//
// Streams are numbered in the order the log first gives them an event, and heads and events are
// keyed by that number: a new stream's head and events land at the right edge of their buckets,
// where inserts are cheap, instead of at the random place its id (a UUID, usually) would put
// them. Only the names bucket is keyed by id, and it takes new names in bulk (recent_names.go):
// a stream's name goes there once many new streams have gathered, as a new run written in key
// order, so that no page is rewritten for every new stream.
//
// A stream of one event keeps that event's entry in its head (its sid, timestamp and hash are the
// head's last ones), and its head goes into a run with those of the other streams its transaction
// numbered, so a write to a new stream puts no key of its own: most streams of an event store
// that fans out to new aggregates (an order implying one event per item, say) stay that short
// for a while. The entry moves to the events bucket when the stream's second event is
// indexed; a stream never shrinks (a rewrite keeps its length), so it never moves back.
var (
	bucketMeta       = []byte("meta")
	bucketHeads      = []byte("heads")
	bucketHeadRuns   = []byte("headRuns")
	bucketNames      = []byte("names")
	bucketEvents     = []byte("events")
	bucketTails      = []byte("tails")
	bucketRecords    = []byte("records")
	bucketSpace      = []byte("space")
	bucketJobs       = []byte("jobs")
	bucketCompacting = []byte("compacting")

	allBuckets = [][]byte{bucketMeta, bucketHeadRuns, bucketHeads, bucketNames, bucketEvents, bucketTails, bucketRecords, bucketSpace, bucketJobs, bucketCompacting}

	metaStateKey  = []byte("state")
	metaFormatKey = []byte("format")
	metaTailsKey  = []byte("tails")
)

// indexFormat numbers the layout above. Format 1 keyed events by stream key and kept a separate
// listing bucket; format 2 kept one records key per lsn; format 3 kept heads in one bucket keyed
// by stream key; format 4 kept every name in the names bucket itself, one tree rewritten whole by
// each merge; format 5 kept a key per name in its run; format 6 kept the entry of every event,
// a stream's only one included, in the events bucket; format 7 kept one key per event there;
// format 8 kept a heads key for every stream; format 9 put every run in the events bucket; format
// 10 merged all the tails at once and kept only their span in meta.
const indexFormat = 11

func streamKeyBytes(dst []byte, k StreamKey) []byte {
	if dst == nil {
		dst = make([]byte, 0, len(k.Type)+len(k.ID)+10)
	}
	dst = append(dst, k.Type...)
	dst = append(dst, 0)
	return append(dst, k.ID...)
}

func parseStreamKey(b []byte) (StreamKey, error) {
	t, id, ok := strings.Cut(string(b), "\x00")
	if !ok {
		return StreamKey{}, fmt.Errorf("%w: bad stream key", ErrBadIndex)
	}
	return StreamKey{Type: t, ID: id}, nil
}

const eventKeySize = 16

func eventKey(dst []byte, streamNo, index uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, streamNo)
	return binary.BigEndian.AppendUint64(dst, index)
}

func u64Key(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// appendSpaceKey appends to dst the space bucket's key of a record-space key: the space, a NUL
// byte, the key.
func appendSpaceKey(dst []byte, space, key string) []byte {
	dst = append(dst, space...)
	dst = append(dst, 0)
	return append(dst, key...)
}

// spaceKeyString is the key of appendSpaceKey as a string, in one allocation.
func spaceKeyString(space, key string) string { return space + "\x00" + key }

// watermark is the index's progress through the log.
type watermark struct {
	seg     uint32 // segment of the last applied record; catch-up rescans from its start
	lsn     uint64 // last applied record
	lastSID StreamID
	streams uint64 // stream numbers handed out, the last one included
	// named is the highest stream number whose name is in the names bucket, with every number
	// below it; the streams numbered above it are the recent names (recent_names.go).
	named uint64
}

// watermarkSize is the length of a marshalled watermark; watermarkLogSize is its prefix that
// depends on the log alone (Check compares it between an index and a rebuild).
const (
	watermarkSize    = 4 + 8 + 16 + 8 + 8
	watermarkLogSize = 4 + 8 + 16
)

func (w watermark) marshal() []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, watermarkSize), w.seg)
	b = binary.BigEndian.AppendUint64(b, w.lsn)
	b = binary.BigEndian.AppendUint64(b, w.lastSID.Ms)
	b = binary.BigEndian.AppendUint64(b, w.lastSID.Seq)
	b = binary.BigEndian.AppendUint64(b, w.streams)
	return binary.BigEndian.AppendUint64(b, w.named)
}

func unmarshalWatermark(b []byte) (watermark, error) {
	if len(b) != watermarkSize {
		return watermark{}, fmt.Errorf("%w: bad watermark", ErrBadIndex)
	}
	return watermark{
		seg:     binary.BigEndian.Uint32(b),
		lsn:     binary.BigEndian.Uint64(b[4:]),
		lastSID: StreamID{Ms: binary.BigEndian.Uint64(b[12:]), Seq: binary.BigEndian.Uint64(b[20:])},
		streams: binary.BigEndian.Uint64(b[28:]),
		named:   binary.BigEndian.Uint64(b[36:]),
	}, nil
}

// head is a stream's metadata plus the lsn of the record that last changed it.
type head struct {
	StreamInfo
	lsn uint64
	no  uint64 // the stream's number in the index; 0 until the indexer indexes its first event
}

// eventRef is the part of an entry that says where an event is: what a head of length 1 keeps of
// its stream's event, whose sid, timestamp and hash are the head's last ones.
type eventRef struct {
	holder, eff uint64
	ordinal     uint32
}

// headFixedSize is the part of a marshalled head before its stream key, or before the only
// event's entry (onlyEntrySize) when its length is 1.
const (
	headFixedSize = 8 + 32 + 8 + 8 + 16 + 8
	onlyEntrySize = 8 + 8 + 4
)

// headSize is the length of the marshalled head of stream k, of the given length.
func headSize(length uint64, k StreamKey) int {
	n := headFixedSize + len(k.Type) + 1 + len(k.ID)
	if length == 1 {
		n += onlyEntrySize
	}
	return n
}

// onlyEntry is the entry of the event of a stream of length 1, whose head is h and keeps ref.
func (h *head) onlyEntry(ref eventRef) entry {
	return entry{holder: ref.holder, eff: ref.eff, ordinal: ref.ordinal, sid: h.LastStreamID, ts: h.LastTimestamp, hash: h.LastHash}
}

// marshal appends the heads bucket's value of h, the head of stream k: its fields, only when the
// stream has one event, then k. The number is the bucket's key.
func (h *head) marshal(dst []byte, k StreamKey, only eventRef) []byte {
	if dst == nil {
		dst = make([]byte, 0, headSize(h.Length, k))
	}
	dst = binary.BigEndian.AppendUint64(dst, h.Length)
	dst = append(dst, h.LastHash[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.FirstTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.LastTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, h.LastStreamID.Ms)
	dst = binary.BigEndian.AppendUint64(dst, h.LastStreamID.Seq)
	dst = binary.BigEndian.AppendUint64(dst, h.lsn)
	if h.Length == 1 {
		dst = binary.BigEndian.AppendUint64(dst, only.holder)
		dst = binary.BigEndian.AppendUint64(dst, only.eff)
		dst = binary.BigEndian.AppendUint32(dst, only.ordinal)
	}
	return streamKeyBytes(dst, k)
}

// unmarshal reads a heads bucket entry: its key, the stream number, and its value.
func (h *head) unmarshal(no, b []byte) error {
	if len(no) != 8 || len(headKey(b)) == 0 {
		return fmt.Errorf("%w: bad stream head", ErrBadIndex)
	}
	h.Length = binary.BigEndian.Uint64(b)
	copy(h.LastHash[:], b[8:40])
	h.FirstTimestamp = int64(binary.BigEndian.Uint64(b[40:]))
	h.LastTimestamp = int64(binary.BigEndian.Uint64(b[48:]))
	h.LastStreamID = StreamID{Ms: binary.BigEndian.Uint64(b[56:]), Seq: binary.BigEndian.Uint64(b[64:])}
	h.lsn = binary.BigEndian.Uint64(b[72:])
	h.no = binary.BigEndian.Uint64(no)
	return nil
}

// headOnly returns what the heads bucket value b, of a stream of length 1 (unmarshal checked its
// size), keeps of the stream's event.
func headOnly(b []byte) eventRef {
	return eventRef{
		holder:  binary.BigEndian.Uint64(b[headFixedSize:]),
		eff:     binary.BigEndian.Uint64(b[headFixedSize+8:]),
		ordinal: binary.BigEndian.Uint32(b[headFixedSize+16:]),
	}
}

// headKey returns the stream key bytes (type 0 id) of a heads bucket value.
func headKey(b []byte) []byte {
	at := headFixedSize
	if len(b) >= 8 && binary.BigEndian.Uint64(b) == 1 {
		at += onlyEntrySize
	}
	if len(b) <= at {
		return nil
	}
	return b[at:]
}

// entry locates one event: the record that holds its current version and its place there.
type entry struct {
	holder  uint64 // lsn of the record holding the event
	eff     uint64 // precedence of that version
	ordinal uint32 // the event's number within the record
	sid     StreamID
	ts      int64
	hash    [32]byte
}

const entrySize = 8 + 8 + 4 + 16 + 8 + 32

func (e *entry) marshal(dst []byte) []byte {
	if dst == nil {
		dst = make([]byte, 0, entrySize)
	}
	dst = binary.BigEndian.AppendUint64(dst, e.holder)
	dst = binary.BigEndian.AppendUint64(dst, e.eff)
	dst = binary.BigEndian.AppendUint32(dst, e.ordinal)
	dst = binary.BigEndian.AppendUint64(dst, e.sid.Ms)
	dst = binary.BigEndian.AppendUint64(dst, e.sid.Seq)
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.ts))
	return append(dst, e.hash[:]...)
}

func (e *entry) unmarshal(b []byte) error {
	if len(b) != entrySize {
		return fmt.Errorf("%w: bad event entry", ErrBadIndex)
	}
	e.holder = binary.BigEndian.Uint64(b)
	e.eff = binary.BigEndian.Uint64(b[8:])
	e.ordinal = binary.BigEndian.Uint32(b[16:])
	e.sid = StreamID{Ms: binary.BigEndian.Uint64(b[20:]), Seq: binary.BigEndian.Uint64(b[28:])}
	e.ts = int64(binary.BigEndian.Uint64(b[36:]))
	copy(e.hash[:], b[44:])
	return nil
}

// spaceEntry is one record-space key: its value, or a deletion marker that keeps the eff of the
// delete so that an older carried put cannot resurrect the key.
type spaceEntry struct {
	live   bool
	eff    uint64
	holder uint64
	value  []byte
}

// spaceEntryFixedSize is the part of a marshalled spaceEntry before its value.
const spaceEntryFixedSize = 1 + 8 + 8

// marshal appends the space bucket's value of e to b.
func (e *spaceEntry) marshal(b []byte) []byte {
	if e.live {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.BigEndian.AppendUint64(b, e.eff)
	b = binary.BigEndian.AppendUint64(b, e.holder)
	return append(b, e.value...)
}

func (e *spaceEntry) unmarshal(b []byte) error {
	if len(b) < spaceEntryFixedSize {
		return fmt.Errorf("%w: bad record-space entry", ErrBadIndex)
	}
	e.live = b[0] == 1
	e.eff = binary.BigEndian.Uint64(b[1:])
	e.holder = binary.BigEndian.Uint64(b[9:])
	e.value = b[17:]
	return nil
}

func marshalLSNs(dst []byte, lsns []uint64) []byte {
	for _, l := range lsns {
		dst = binary.BigEndian.AppendUint64(dst, l)
	}
	return dst
}

func unmarshalLSNs(b []byte) []uint64 {
	out := make([]uint64, 0, len(b)/8)
	for len(b) >= 8 {
		out = append(out, binary.BigEndian.Uint64(b))
		b = b[8:]
	}
	return out
}
