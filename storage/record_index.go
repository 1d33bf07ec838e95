package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/j17-go/j17/wal"
	bolt "go.etcd.io/bbolt"
)

// The records bucket maps every record's lsn to its position in the log, in blocks of
// recordsPerBlock consecutive lsns: the key is lsn/recordsPerBlock (8B BE), the value that many
// positions (8B BE each, wal.Pos.Uint64), 0 for an lsn whose record is not in the log (erased, or
// not written yet). The indexer applies records in lsn order, so a transaction puts each block it
// fills once, where one key per record cost a B+tree insert per commit (about 3% of the commit
// rate at 64 committers).
const (
	recordsPerBlock = 64
	recordBlockSize = 8 * recordsPerBlock
)

func recordBlockKey(lsn uint64) []byte { return u64Key(lsn / recordsPerBlock) }

func recordSlot(lsn uint64) int { return int(lsn%recordsPerBlock) * 8 }

// recordIndex reads and changes the records bucket one record at a time, for the paths outside
// the indexer (reads, compaction, repair, erasure).
type recordIndex struct{ b *bolt.Bucket }

func recordsOf(tx *bolt.Tx) recordIndex { return recordIndex{tx.Bucket(bucketRecords)} }

// get returns the position of record lsn, if the record is in the log.
func (ri recordIndex) get(lsn uint64) (wal.Pos, bool, error) {
	return blockPos(ri.b.Get(recordBlockKey(lsn)), lsn)
}

// blockPos returns lsn's position in its block, nil when the index has none. A block of another
// length is damage (ErrBadIndex), not a block without records: taken for one, it made a read
// report a record missing, as if a rewrite had dropped it, and the indexer overwrite the
// positions it held.
func blockPos(block []byte, lsn uint64) (wal.Pos, bool, error) {
	if block == nil {
		return wal.Pos{}, false, nil
	}
	if len(block) != recordBlockSize {
		return wal.Pos{}, false, badBlock(lsn, block)
	}
	v := binary.BigEndian.Uint64(block[recordSlot(lsn):])
	return wal.PosFromUint64(v), v != 0, nil
}

func badBlock(lsn uint64, block []byte) error {
	return fmt.Errorf("%w: block of record %d is %d bytes long, not %d", ErrBadIndex, lsn, len(block), recordBlockSize)
}

// put sets the position of record lsn.
func (ri recordIndex) put(lsn uint64, pos wal.Pos) error {
	rb := recordBlocks{b: ri.b, alloc: func(n int) []byte { return make([]byte, 0, n) }}
	if err := rb.set(lsn, pos); err != nil {
		return err
	}
	return rb.flush()
}

// remove forgets record lsn; a block left without records is deleted.
func (ri recordIndex) remove(lsn uint64) error {
	old := ri.b.Get(recordBlockKey(lsn))
	if old == nil {
		return nil
	}
	if len(old) != recordBlockSize {
		return badBlock(lsn, old)
	}
	block := append([]byte(nil), old...)
	binary.BigEndian.PutUint64(block[recordSlot(lsn):], 0)
	for i := 0; i < recordBlockSize; i += 8 {
		if binary.BigEndian.Uint64(block[i:]) != 0 {
			return ri.b.Put(recordBlockKey(lsn), block)
		}
	}
	return ri.b.Delete(recordBlockKey(lsn))
}

// each calls fn with the lsns from..to (inclusive) whose records are in the log, in order, until
// fn returns false.
func (ri recordIndex) each(from, to uint64, fn func(lsn uint64) bool) error {
	c := ri.b.Cursor()
	for k, v := c.Seek(recordBlockKey(from)); k != nil; k, v = c.Next() {
		first := binary.BigEndian.Uint64(k) * recordsPerBlock
		if first > to {
			return nil
		}
		if len(v) != recordBlockSize {
			return badBlock(first, v)
		}
		for i := range uint64(recordsPerBlock) {
			l := first + i
			if l < from || binary.BigEndian.Uint64(v[i*8:]) == 0 {
				continue
			}
			if l > to || !fn(l) {
				return nil
			}
		}
	}
	return nil
}

// recordBlocks gathers the indexer's record positions into whole blocks: the block being filled
// is kept in memory and put when a record of another block comes, or when the transaction ends.
type recordBlocks struct {
	b     *bolt.Bucket
	no    uint64 // the block in buf
	buf   []byte // nil when no block is being filled
	alloc func(n int) []byte
}

func (rb *recordBlocks) set(lsn uint64, pos wal.Pos) error {
	if no := lsn / recordsPerBlock; rb.buf == nil || no != rb.no {
		if err := rb.flush(); err != nil {
			return err
		}
		old := rb.b.Get(recordBlockKey(lsn))
		if old != nil && len(old) != recordBlockSize {
			return badBlock(lsn, old)
		}
		rb.no, rb.buf = no, rb.alloc(recordBlockSize)[:recordBlockSize]
		if old != nil {
			copy(rb.buf, old)
		} else {
			clear(rb.buf)
		}
	}
	binary.BigEndian.PutUint64(rb.buf[recordSlot(lsn):], pos.Uint64())
	return nil
}

// flush puts the block being filled. bbolt keeps the value until the transaction commits, so
// the buffer is not used again.
func (rb *recordBlocks) flush() error {
	if rb.buf == nil {
		return nil
	}
	buf := rb.buf
	rb.buf = nil
	return rb.b.Put(u64Key(rb.no), buf)
}

// has reports whether record lsn is in the log as far as this transaction knows.
func (rb *recordBlocks) has(lsn uint64) (bool, error) {
	block := rb.buf
	if block == nil || lsn/recordsPerBlock != rb.no {
		block = rb.b.Get(recordBlockKey(lsn))
	}
	_, ok, err := blockPos(block, lsn)
	return ok, err
}
