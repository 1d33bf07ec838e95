package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"
)

// Group commit.
//
// Write encodes a record outside any lock (checksum and compression), then, holding mu only to
// copy the frame, appends it to the group being filled and learns its position and group number.
// One flusher goroutine takes the whole group at once, writes it with one write per segment it
// touches and one fsync, then wakes the group's waiters. While it writes, the next group fills.
// After waking a group, the flusher takes the next one at once, however small (doc.go says why).
// A writer that knows it is alone (WriteDeferred, then Flush) writes its group itself while the
// flusher is idle, so that a lone record costs no hand-off between goroutines (doc.go).
//
// Whoever writes a group, the flusher or a Flush, holds mu.flushing meanwhile: one group at a
// time, in order, and the spare buffers belong to the holder.
//
// Ordering guarantees:
//   - Records reach the file in the order their Write calls took mu, and positions increase in
//     that order.
//   - A group becomes durable only after every earlier group has.
//   - A segment is fsynced, and trimmed of its preallocated tail, before the next one is
//     created, and the directory is fsynced after a segment is created, so after a crash only
//     the last segment can have a torn tail or a preallocated one.
//   - End() moves only after the fsync, so readers never see bytes that a crash could take back.

// maxSpare bounds the group buffer kept for reuse, so that one huge record does not pin memory.
const maxSpare = 4 << 20

// Pending is a record handed to Write and not yet known to be durable.
type Pending struct {
	l   *Log
	pos Pos
	seq uint64
	err error
}

// Pos returns the record's position; it is known as soon as Write returns.
func (p *Pending) Pos() Pos { return p.pos }

// Wait returns once the record is durable (fsynced), or the error that failed the log.
func (p *Pending) Wait() error {
	if p.err != nil {
		return p.err
	}
	return p.l.wait(p.seq)
}

// Write enqueues a record. Records reach the log in the order of Write calls (a caller that needs
// an order serializes its calls). It copies payload, and does not wait for durability.
func (l *Log) Write(kind uint8, payload []byte) *Pending {
	pos, seq, err := l.write(kind, payload, true)
	return &Pending{l: l, pos: pos, seq: seq, err: err}
}

// WriteDeferred is Write without waking the flusher: the caller calls the Pending's Flush next,
// once it holds no lock that other writers need, since the record may otherwise wait for the next
// Write to wake the flusher.
func (l *Log) WriteDeferred(kind uint8, payload []byte) *Pending {
	pos, seq, err := l.write(kind, payload, false)
	return &Pending{l: l, pos: pos, seq: seq, err: err}
}

// Flush writes and fsyncs the record's group in the caller's goroutine when no group is being
// written and the flusher is idle, and returns once it is durable or the log failed. Otherwise
// it returns at once: the group is then already written, being written, or left to the flusher,
// which is at work or woken when the group being written is done; Wait tells when it is durable.
func (p *Pending) Flush() {
	l := p.l
	l.mu.Lock()
	if p.err != nil || l.mu.seq != p.seq || len(l.mu.parts) == 0 || l.mu.flushing || !l.mu.flusherIdle || l.mu.closing {
		l.mu.Unlock()
		return
	}
	l.flushGroup()
}

// Append writes a record and waits until it is durable.
func (l *Log) Append(kind uint8, payload []byte) (Pos, error) {
	pos, seq, err := l.write(kind, payload, true)
	if err != nil {
		return Pos{}, err
	}
	if err := l.wait(seq); err != nil {
		return Pos{}, err
	}
	return pos, nil
}

// write appends a record to the group being filled, and wakes an idle flusher if wake is set.
func (l *Log) write(kind uint8, payload []byte, wake bool) (Pos, uint64, error) {
	if len(payload) > MaxPayload {
		return Pos{}, 0, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(payload), MaxPayload)
	}
	stored, flags := payload, uint8(0)
	if l.threshold >= 0 && len(payload) >= l.threshold {
		scratch, out, ok := compress(payload)
		defer putScratch(scratch)
		if ok {
			stored, flags = out, flagS2
		}
	}
	crc := payloadCRC(stored)
	size := int64(headerSize + len(stored))

	l.mu.Lock()
	if l.mu.err != nil {
		err := l.mu.err
		l.mu.Unlock()
		return Pos{}, 0, err
	}
	if l.mu.closing {
		l.mu.Unlock()
		return Pos{}, 0, ErrClosed
	}
	if l.mu.next.Off > 0 && int64(l.mu.next.Off)+size > l.segSize {
		l.mu.next = Pos{Seg: l.mu.next.Seg + 1}
	}
	pos := l.mu.next
	if n := len(l.mu.parts); n == 0 || l.mu.parts[n-1].seg != pos.Seg {
		l.mu.parts = append(l.mu.parts, part{seg: pos.Seg, off: pos.Off, start: len(l.mu.buf)})
	}
	// The header is built in place: a header array on the stack would escape through crc32.
	at := len(l.mu.buf)
	l.mu.buf = append(l.mu.buf, make([]byte, headerSize)...)
	hdr := l.mu.buf[at:]
	binary.LittleEndian.PutUint32(hdr[4:8], uint32(len(stored)))
	hdr[8] = kind
	hdr[9] = flags
	binary.LittleEndian.PutUint32(hdr[0:4], crc32.Update(crc, crcTable, hdr[4:headerSize]))
	l.mu.buf = append(l.mu.buf, stored...)
	l.mu.count.Add(1)
	l.mu.next.Off += uint32(size)
	seq := l.mu.seq
	if wake && l.mu.flusherIdle {
		l.mu.flusherIdle = false
		l.mu.flushCond.Signal()
	}
	l.mu.Unlock()
	return pos, seq, nil
}

// Rotate seals the active segment and starts a new one. It returns once the new segment exists
// and everything written before the call is durable. A log whose active segment is empty is left
// as it is.
func (l *Log) Rotate() error {
	l.mu.Lock()
	if l.mu.err != nil || l.mu.closing {
		err := l.mu.err
		l.mu.Unlock()
		if err == nil {
			err = ErrClosed
		}
		return err
	}
	if l.mu.next.Off == 0 {
		seq := l.mu.seq
		if len(l.mu.parts) == 0 {
			seq--
		}
		l.mu.Unlock()
		return l.wait(seq)
	}
	l.mu.next = Pos{Seg: l.mu.next.Seg + 1}
	l.mu.parts = append(l.mu.parts, part{seg: l.mu.next.Seg, start: len(l.mu.buf)})
	seq := l.mu.seq
	if l.mu.flusherIdle {
		l.mu.flusherIdle = false
		l.mu.flushCond.Signal()
	}
	l.mu.Unlock()
	return l.wait(seq)
}

// wakePool recycles the channels waiters block on, so that waiting does not allocate.
var wakePool = sync.Pool{New: func() any { return make(chan struct{}, 1) }}

// wait returns once group seq is durable, or the error that failed the log.
func (l *Log) wait(seq uint64) error {
	if l.doneSeq.Load() >= seq {
		return nil
	}
	l.sync.Lock()
	if l.sync.done >= seq {
		l.sync.Unlock()
		return nil
	}
	if err := l.sync.err; err != nil {
		l.sync.Unlock()
		return err
	}
	ch := wakePool.Get().(chan struct{})
	l.sync.waiters[seq&1] = append(l.sync.waiters[seq&1], ch)
	l.sync.Unlock()
	<-ch
	wakePool.Put(ch)
	if l.doneSeq.Load() >= seq {
		return nil
	}
	l.sync.Lock()
	defer l.sync.Unlock()
	return l.sync.err
}

// flushLoop is the flusher goroutine: it writes and fsyncs one group at a time until Close, and
// leaves a group alone while a Flush writes the one before.
func (l *Log) flushLoop() {
	defer close(l.flusherDone)
	for {
		l.mu.Lock()
		for l.mu.flushing || (len(l.mu.parts) == 0 && !l.mu.closing) {
			l.mu.flusherIdle = true
			l.mu.flushCond.Wait()
		}
		l.mu.flusherIdle = false
		if len(l.mu.parts) == 0 {
			failed := l.mu.err
			l.mu.Unlock()
			if failed == nil {
				if err := l.trimActive(); err != nil {
					l.fail(err)
				}
			}
			return
		}
		l.flushGroup()
	}
}

// flushGroup takes the group being filled, with mu held and a group in it, releases mu, writes
// and fsyncs the group, calls OnDurable and wakes its waiters. A Flush that wrote it wakes the
// flusher if another group filled meanwhile or the log is closing.
func (l *Log) flushGroup() {
	buf, parts, seq, end := l.mu.buf, l.mu.parts, l.mu.seq, l.mu.next
	records := l.mu.count.Swap(0)
	l.mu.buf, l.mu.parts = l.spare[:0], l.spareParts[:0]
	l.mu.seq++
	l.mu.flushing = true
	failed := l.mu.err
	l.mu.Unlock()

	if failed == nil {
		if err := l.writeGroup(buf, parts); err != nil {
			l.fail(err)
		} else {
			l.durable.Store(end.Uint64())
			l.stats.records.Add(uint64(records))
			l.stats.groups.Add(1)
			if l.onDurable != nil {
				l.onDurable()
			}
			l.publish(seq)
		}
	}
	if cap(buf) > maxSpare {
		buf = nil
	}
	l.mu.Lock()
	l.spare, l.spareParts = buf, parts
	l.mu.flushing = false
	if (len(l.mu.parts) > 0 || l.mu.closing) && l.mu.flusherIdle {
		l.mu.flusherIdle = false
		l.mu.flushCond.Signal()
	}
	l.mu.Unlock()
}

// writeGroup writes one group and fsyncs it, switching segments where the group says so.
func (l *Log) writeGroup(buf []byte, parts []part) error {
	for i, p := range parts {
		stop := len(buf)
		if i+1 < len(parts) {
			stop = parts[i+1].start
		}
		if p.seg != l.active.num {
			if err := l.sealActive(); err != nil {
				return err
			}
			if err := l.createSegment(p.seg); err != nil {
				return err
			}
		}
		if stop > p.start {
			end := int64(p.off) + int64(stop-p.start)
			if l.prealloc > 0 && end > l.allocEnd {
				if err := l.extendActive(l.preallocTarget(end)); err != nil {
					return err
				}
			}
			if _, err := l.active.f.WriteAt(buf[p.start:stop], int64(p.off)); err != nil {
				return fmt.Errorf("wal: write %s: %w", l.active.path, err)
			}
			l.activeSize, l.allocEnd = end, max(l.allocEnd, end)
			l.unsynced = true
		}
	}
	if l.unsynced {
		if err := l.syncFile(l.active.f); err != nil {
			return fmt.Errorf("wal: fsync %s: %w", l.active.path, err)
		}
		l.unsynced = false
	}
	return nil
}

// sealActive makes the active segment durable, trims it to its records, and puts an immutable
// view of it in the table. The trim is durable before the next segment is created, so only a
// crash before that leaves a preallocated tail, and then on the last segment.
func (l *Log) sealActive() error {
	old := l.active
	if l.unsynced {
		if err := l.syncFile(old.f); err != nil {
			return fmt.Errorf("wal: fsync %s: %w", old.path, err)
		}
		l.unsynced = false
	}
	if err := l.trimActive(); err != nil {
		return err
	}
	f, err := l.fs.Open(old.path)
	if err != nil {
		return fmt.Errorf("wal: reopen %s: %w", old.path, err)
	}
	sealed := newSegment(old.num, old.path, f, true, l.activeSize)
	l.tableMu.Lock()
	l.table.Store(l.table.Load().with(old.num, sealed))
	l.tableMu.Unlock()
	old.release()
	return nil
}

// createSegment creates segment n, makes its name durable and makes it the active segment.
func (l *Log) createSegment(n uint32) error {
	path := segPath(l.dir, n)
	f, err := l.fs.Create(path)
	if err != nil {
		return fmt.Errorf("wal: create %s: %w", path, err)
	}
	if err := l.syncDir(); err != nil {
		f.Close()
		return fmt.Errorf("wal: fsync %s: %w", l.dir, err)
	}
	s := newSegment(n, path, f, false, 0)
	if t := l.table.Load(); t != nil {
		l.tableMu.Lock()
		l.table.Store(t.with(n, s))
		l.tableMu.Unlock()
	}
	l.active, l.activeSize, l.allocEnd = s, 0, 0
	return nil
}

// publish marks group seq durable and wakes its waiters.
func (l *Log) publish(seq uint64) {
	l.sync.Lock()
	l.sync.done = seq
	l.doneSeq.Store(seq)
	ws := l.sync.waiters[seq&1]
	l.sync.waiters[seq&1] = l.wakeSpare[:0]
	l.sync.Unlock()
	l.wakeSpare = wake(ws)
}

// wake wakes every waiter in ws and returns ws emptied for reuse.
func wake(ws []chan struct{}) []chan struct{} {
	for _, ch := range ws {
		ch <- struct{}{}
	}
	clear(ws)
	return ws[:0]
}

// fail stops the log for good: a write or fsync that failed is never retried, because after a
// failed fsync the kernel may already have dropped the dirty pages it could not write.
func (l *Log) fail(err error) {
	l.logger.Error("wal: log failed; no more writes", "err", err)
	l.mu.Lock()
	if l.mu.err == nil {
		l.mu.err = err
	}
	l.mu.Unlock()
	l.sync.Lock()
	if l.sync.err == nil {
		l.sync.err = err
	}
	ws := append(l.sync.waiters[0], l.sync.waiters[1]...)
	l.sync.waiters[0], l.sync.waiters[1] = nil, nil
	l.sync.Unlock()
	wake(ws)
}
