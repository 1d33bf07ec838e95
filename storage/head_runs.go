package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Runs of heads. A transaction numbers its new streams one after the other, above every number
// handed out before (index_apply.go), and writes their heads together, as runs in the headRuns
// bucket, instead of putting a key per stream in the heads bucket: every bbolt Put walks the tree
// from its root and allocates its cursor and a copy of its key, which made the heads of new
// streams the largest cost of the indexer under orders to new streams. A later change to a
// stream's head is a key of its own in the heads bucket, which takes precedence over the
// stream's entry in its run; runs are never rewritten. So:
//
//   - the runs hold every number from 1 to the count handed out, each once, in order, without a
//     gap between one run and the next;
//   - a stream's head is its heads key if it has one, else its entry in the run that holds it;
//   - every heads key is a number some run holds.
//
// A run's key is the number of its first head (8B BE); its value is the count of heads n (4B),
// where each head ends, counted from the start of the first (4B each, ascending), then the heads,
// each spelled as the heads bucket spells its values.

// headRunBytes bounds a run's value, unless a single head is larger: a run then fits one 4 KiB
// page with its page and element headers, so that bbolt needs no run of contiguous free pages for
// it.
const headRunBytes = 4000

// errStopHeads ends forEachHead early without an error.
var errStopHeads = errors.New("stop walking heads")

// putHeadRuns writes hs, heads of consecutive numbers, as runs; bbolt keeps the values until the
// transaction commits, so they are carved from alloc. A run puts each head at its first number
// plus its place, so numbers with a gap would misplace heads: that fails instead.
func putHeadRuns(runs *bolt.Bucket, hs []*txHead, alloc func(int) []byte) error {
	for k, h := range hs {
		if h.no != hs[0].no+uint64(k) {
			return fmt.Errorf("storage: BUG: new stream %d follows %d in one transaction", h.no, hs[k-1].no)
		}
	}
	for i := 0; i < len(hs); {
		j, size := i+1, 4+4+headSize(hs[i].Length, hs[i].key)
		for ; j < len(hs); j++ {
			more := 4 + headSize(hs[j].Length, hs[j].key)
			if size+more > headRunBytes {
				break
			}
			size += more
		}
		v := binary.BigEndian.AppendUint32(alloc(size), uint32(j-i))
		end := 0
		for _, h := range hs[i:j] {
			end += headSize(h.Length, h.key)
			v = binary.BigEndian.AppendUint32(v, uint32(end))
		}
		for _, h := range hs[i:j] {
			v = h.marshal(v, h.key, h.only)
		}
		if err := runs.Put(binary.BigEndian.AppendUint64(alloc(8), hs[i].no), v); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// headRun is a run of heads as read from the headRuns bucket.
type headRun struct {
	first uint64
	ends  []byte // the end offsets, 4B each
	heads []byte
}

func parseHeadRun(k, v []byte) (headRun, error) {
	if len(k) != 8 || len(v) < 4 {
		return headRun{}, fmt.Errorf("%w: bad run of heads %x", ErrBadIndex, k)
	}
	n := int(binary.BigEndian.Uint32(v))
	if n == 0 || len(v) < 4+4*n {
		return headRun{}, fmt.Errorf("%w: bad run of heads %x", ErrBadIndex, k)
	}
	r := headRun{first: binary.BigEndian.Uint64(k), ends: v[4 : 4+4*n], heads: v[4+4*n:]}
	if int(binary.BigEndian.Uint32(r.ends[4*(n-1):])) != len(r.heads) {
		return headRun{}, fmt.Errorf("%w: bad run of heads %x", ErrBadIndex, k)
	}
	return r, nil
}

func (r headRun) len() int { return len(r.ends) / 4 }

// holds reports whether the run holds the head of stream no.
func (r headRun) holds(no uint64) bool { return no >= r.first && no-r.first < uint64(r.len()) }

// head returns the i-th head of the run.
func (r headRun) head(i int) ([]byte, error) {
	from := 0
	if i > 0 {
		from = int(binary.BigEndian.Uint32(r.ends[4*(i-1):]))
	}
	to := int(binary.BigEndian.Uint32(r.ends[4*i:]))
	if from > to || to > len(r.heads) {
		return nil, fmt.Errorf("%w: bad run of heads %d", ErrBadIndex, r.first)
	}
	return r.heads[from:to:to], nil
}

// runAt moves c to the run that would hold number no: the last one whose first number is at most
// no, or the first run if every run begins above no. It returns a nil key if there is no run.
func runAt(c *bolt.Cursor, no uint64) (k, v []byte) {
	nk := u64Key(no)
	k, v = c.Seek(nk)
	switch {
	case k == nil:
		k, v = c.Last()
	case !bytes.Equal(k, nk):
		if pk, pv := c.Prev(); pk != nil {
			return pk, pv
		}
		k, v = c.First()
	}
	return k, v
}

// headValue returns the head of the stream numbered nk (8B BE): its heads key, else its entry in
// a run; nil if the index has neither.
func headValue(heads, runs *bolt.Bucket, nk []byte) ([]byte, error) {
	if v := heads.Get(nk); v != nil {
		return v, nil
	}
	no := binary.BigEndian.Uint64(nk)
	k, v := runAt(runs.Cursor(), no)
	if k == nil {
		return nil, nil
	}
	r, err := parseHeadRun(k, v)
	if err != nil || !r.holds(no) {
		return nil, err
	}
	return r.head(int(no - r.first))
}

// forEachHead calls fn with the number and head of every stream numbered from on, in number
// order, until fn returns errStopHeads (forEachHead then returns nil) or another error. It fails
// on runs that leave a gap or overlap and on a heads key that no run holds.
func forEachHead(tx *bolt.Tx, from uint64, fn func(no uint64, v []byte) error) error {
	sc := tx.Bucket(bucketHeads).Cursor()
	sk, sv := sc.Seek(u64Key(from))
	rc := tx.Bucket(bucketHeadRuns).Cursor()
	next := uint64(0) // the first number of the next run; 0 before the first run
	for k, v := runAt(rc, from); k != nil; k, v = rc.Next() {
		r, err := parseHeadRun(k, v)
		if err != nil {
			return err
		}
		if next != 0 && r.first != next {
			return fmt.Errorf("%w: the run of heads from %d follows one that ends at %d", ErrBadIndex, r.first, next-1)
		}
		next = r.first + uint64(r.len())
		for i := range r.len() {
			no := r.first + uint64(i)
			if no < from {
				continue
			}
			hv, err := r.head(i)
			if err != nil {
				return err
			}
			if sk != nil {
				switch sno := binary.BigEndian.Uint64(sk); {
				case sno < no:
					return fmt.Errorf("%w: stream %d has a head but no run holds it", ErrBadIndex, sno)
				case sno == no:
					hv = sv
					sk, sv = sc.Next()
				}
			}
			if err := fn(no, hv); err != nil {
				if errors.Is(err, errStopHeads) {
					return nil
				}
				return err
			}
		}
	}
	if sk != nil {
		return fmt.Errorf("%w: stream %d has a head but no run holds it", ErrBadIndex, binary.BigEndian.Uint64(sk))
	}
	return nil
}
