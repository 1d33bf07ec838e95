package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

// indexTx is one bbolt write transaction applying records in log order. The same code serves the
// background indexer, the catch-up at open and Rebuild, which is why the index equals a rebuild.
type indexTx struct {
	meta, streams, events, types, records, space, jobs *bolt.Bucket
	wm                                                 watermark
	// heads caches the heads this transaction changed; they are written once, in finish, so a
	// stream touched by many records of a batch costs one Put.
	heads map[StreamKey]*txHead
	// arena hands out the keys and values of Puts: bbolt keeps them until the transaction
	// commits, so they are carved from chunks that are never reused instead of allocated one by
	// one.
	arena []byte
}

const arenaChunk = 64 << 10

// alloc returns n bytes (length 0, capacity n) that no other Put of this transaction shares.
func (x *indexTx) alloc(n int) []byte {
	if n > arenaChunk/8 {
		return make([]byte, 0, n)
	}
	if cap(x.arena)-len(x.arena) < n {
		x.arena = make([]byte, 0, arenaChunk)
	}
	b := x.arena[len(x.arena) : len(x.arena) : len(x.arena)+n]
	x.arena = x.arena[:len(x.arena)+n]
	return b
}

type txHead struct {
	head
	dirty, wasEmpty bool
}

// Values handed to bbolt's Put must stay untouched until the transaction commits, so every key and
// value below is freshly allocated or taken from the transaction's arena.

func createBuckets(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("storage: create index bucket %s: %w", name, err)
		}
	}
	return nil
}

func readWatermark(tx *bolt.Tx) (watermark, error) {
	b := tx.Bucket(bucketMeta).Get(metaStateKey)
	if b == nil {
		return watermark{}, nil
	}
	return unmarshalWatermark(b)
}

func newIndexTx(tx *bolt.Tx) (*indexTx, error) {
	wm, err := readWatermark(tx)
	if err != nil {
		return nil, err
	}
	x := &indexTx{
		wm:   wm,
		meta: tx.Bucket(bucketMeta), streams: tx.Bucket(bucketStreams), events: tx.Bucket(bucketEvents),
		types: tx.Bucket(bucketTypes), records: tx.Bucket(bucketRecords), space: tx.Bucket(bucketSpace),
		jobs: tx.Bucket(bucketJobs),
	}
	// Records are keyed by increasing lsn: pages fill from the left and may be split full.
	x.records.FillPercent = 1.0
	return x, nil
}

// finish writes the changed heads and the watermark; call it once before the transaction
// commits.
func (x *indexTx) finish() error {
	for k, h := range x.heads {
		if !h.dirty {
			continue
		}
		sk := streamKeyBytes(nil, k)
		if err := x.streams.Put(sk, h.marshal(nil)); err != nil {
			return err
		}
		if h.wasEmpty {
			if err := x.types.Put(sk, nil); err != nil {
				return err
			}
		}
	}
	return x.meta.Put(metaStateKey, x.wm.marshal())
}

func (x *indexTx) head(k StreamKey) (*txHead, error) {
	if h, ok := x.heads[k]; ok {
		return h, nil
	}
	h := &txHead{}
	if b := x.streams.Get(streamKeyBytes(nil, k)); b != nil {
		if err := h.unmarshal(b); err != nil {
			return nil, err
		}
	}
	h.wasEmpty = h.Length == 0
	if x.heads == nil {
		x.heads = make(map[StreamKey]*txHead)
	}
	x.heads[k] = h
	return h, nil
}

// apply applies one record found at pos. See record_codec.go for the precedence rule.
func (x *indexTx) apply(r *record, pos wal.Pos) error {
	kv := binary.BigEndian.AppendUint64(x.alloc(16), r.lsn)
	kv = binary.BigEndian.AppendUint64(kv, pos.Uint64())
	if err := x.records.Put(kv[:8], kv[8:]); err != nil {
		return err
	}
	if len(r.superseded) > 0 {
		if err := x.addJob(r); err != nil {
			return err
		}
	}
	var ordinal uint32
	for gi := range r.groups {
		g := &r.groups[gi]
		if err := x.applyGroup(r, g, ordinal); err != nil {
			return err
		}
		ordinal += uint32(len(g.events))
	}
	for _, p := range r.puts {
		if err := x.applySpace(r, p.Space, p.Key, true, p.Value); err != nil {
			return err
		}
	}
	for _, d := range r.deletes {
		if err := x.applySpace(r, d.Space, d.Key, false, nil); err != nil {
			return err
		}
	}
	x.wm.seg = pos.Seg
	x.wm.lsn = r.lsn
	return nil
}

func (x *indexTx) applyGroup(r *record, g *recGroup, ordinal uint32) error {
	h, err := x.head(g.stream)
	if err != nil {
		return err
	}
	changed := false
	for i := range g.events {
		ev := &g.events[i]
		idx := g.first + uint64(i)
		ek := eventKey(x.alloc(len(g.stream.Type)+len(g.stream.ID)+10), g.stream, idx)
		// Only a carry can be older than what the index holds: an ordinary record's eff is its
		// own lsn, larger than every eff applied before it.
		if b := x.getIfCarry(r, x.events, ek); b != nil {
			var old entry
			if err := old.unmarshal(b); err != nil {
				return err
			}
			if old.eff > r.eff {
				continue
			}
		}
		e := entry{holder: r.lsn, eff: r.eff, ordinal: ordinal + uint32(i), sid: ev.sid, ts: ev.ts, hash: ev.hash}
		if err := x.events.Put(ek, e.marshal(x.alloc(entrySize))); err != nil {
			return err
		}
		if x.wm.lastSID.Less(ev.sid) {
			x.wm.lastSID = ev.sid
		}
		// The head records the lsn of the last record that touched its first or last event, even
		// with equal values, so that a carry leaves the same head whether or not the record it
		// copies is still in the log.
		if idx >= h.Length {
			h.Length, h.LastHash, h.LastTimestamp, h.LastStreamID = idx, ev.hash, ev.ts, ev.sid
			changed = true
		}
		if idx == 1 {
			h.FirstTimestamp = ev.ts
			changed = true
		}
	}
	if changed {
		h.lsn = r.lsn
		h.dirty = true
	}
	return nil
}

func (x *indexTx) applySpace(r *record, space, key string, live bool, value []byte) error {
	k := spaceKey(space, key)
	if b := x.getIfCarry(r, x.space, k); b != nil {
		var old spaceEntry
		if err := old.unmarshal(b); err != nil {
			return err
		}
		if old.eff > r.eff {
			return nil
		}
	}
	e := spaceEntry{live: live, eff: r.eff, holder: r.lsn, value: value}
	return x.space.Put(k, e.marshal())
}

// addJob records the erasure work a rewrite or erasure record implies: dropping the superseded
// records that are still in the log. Superseded records always precede the record, so at this
// point the records bucket knows exactly which of them remain, during live indexing and during a
// rebuild. A rewrite record has one group, its stream; an erasure record (Erase) has none.
func (x *indexTx) addJob(r *record) error {
	if len(r.groups) > 1 {
		return fmt.Errorf("%w: rewrite record with %d groups", ErrBadRecord, len(r.groups))
	}
	var present []uint64
	for _, l := range r.superseded {
		if x.records.Get(u64Key(l)) != nil {
			present = append(present, l)
		}
	}
	if len(present) == 0 {
		return nil
	}
	var stream StreamKey
	if len(r.groups) == 1 {
		stream = r.groups[0].stream
	}
	v := streamKeyBytes(nil, stream)
	v = append(v, 0)
	return x.jobs.Put(u64Key(r.lsn), marshalLSNs(v, present))
}

func (x *indexTx) getIfCarry(r *record, b *bolt.Bucket, k []byte) []byte {
	if r.eff == r.lsn {
		return nil
	}
	return b.Get(k)
}
