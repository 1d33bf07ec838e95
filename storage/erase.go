package storage

import (
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// eraseScanBatch is how many record positions one read transaction of Erase's log scan takes.
const eraseScanBatch = 4096

// Erase sets and deletes record-space keys in one record, like a Commit of puts and deletes, and
// returns only when no older value of any of those keys remains in any file of the store: every
// log record that held one has been dropped from the log (whatever else it still held carried
// forward first, as Rewrite does), and index.db has been rewritten without the free pages that
// held the values. Puts are the keys' new values (for a redacted copy); deletes remove keys.
//
// Finding the older values takes a scan of every record in the log, so Erase is meant for rare
// work such as carrying out a tombstone. A value written to one of the keys while Erase runs is
// erased too when it precedes Erase's record, and kept when it follows it. The erasure is a job
// stored with the record: a crash after the record is durable is finished by the next Open.
// With no keys, Erase only finishes the erasures (of Rewrite or Erase) that an earlier failure
// left pending, so that its return still means none is.
func (s *Store) Erase(puts []Put, deletes []Delete) error {
	if len(puts) == 0 && len(deletes) == 0 {
		return s.runJobs()
	}
	p, err := prepare(&Record{Puts: puts, Deletes: deletes})
	if err != nil {
		return err
	}
	keys := make(map[string]bool, len(puts)+len(deletes))
	for _, pt := range puts {
		keys[spaceKeyString(pt.Space, pt.Key)] = true
	}
	for _, d := range deletes {
		keys[spaceKeyString(d.Space, d.Key)] = true
	}
	s.rewriteMu.Lock()
	defer s.rewriteMu.Unlock()
	start := time.Now()
	s.mu.Lock()
	last := s.mu.lsn
	s.mu.Unlock()
	found, err := s.holdersOf(keys, 0, last)
	if err != nil {
		return err
	}
	p.rec.superseded = found
	lsn, err := s.writeErasure(p)
	if err != nil {
		return err
	}
	// Records committed between the scan and Erase's own record may have put the keys too; their
	// values are older than Erase's, so they go as well.
	late, err := s.holdersOf(keys, last, lsn-1)
	if err != nil {
		return err
	}
	if len(late) > 0 {
		if _, err := s.writeErasure(&prepared{rec: &record{superseded: late}}); err != nil {
			return err
		}
	}
	s.hook("recorded")
	if err := s.runJobsLocked(); err != nil {
		return err
	}
	s.log.Info("storage: record-space values erased", "keys", len(keys), "records", len(found)+len(late),
		"took", time.Since(start))
	return nil
}

// writeErasure writes an erasure record: its own puts and deletes, and the lsns of the records
// its job drops. It returns the record's lsn.
func (s *Store) writeErasure(p *prepared) (uint64, error) {
	p.encode()
	if err := p.checkSize(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	if err := s.usableLocked(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	pending := s.writeLocked(p, nil)
	s.mu.Unlock()
	if err := s.await(pending); err != nil {
		return 0, err
	}
	return p.rec.lsn, nil
}

// holdersOf returns, in increasing order, the lsns of the records in the log after lsn from and
// up to lsn to that put any of keys (space 0 key). It reads the log without filling the cache.
func (s *Store) holdersOf(keys map[string]bool, from, to uint64) ([]uint64, error) {
	if err := s.flush(to); err != nil {
		return nil, err
	}
	var buf []byte
	match := func(space, key []byte) bool {
		buf = append(append(append(buf[:0], space...), 0), key...)
		return keys[string(buf)]
	}
	var out []uint64
	for from < to {
		var batch []uint64
		err := s.view(func(tx *bolt.Tx) error {
			return recordsOf(tx).each(from+1, to, func(l uint64) bool {
				batch = append(batch, l)
				return len(batch) < eraseScanBatch
			})
		})
		if err != nil {
			return nil, err
		}
		if len(batch) == 0 {
			break
		}
		for _, l := range batch {
			var puts bool
			if r := s.cache.get(l); r != nil {
				puts = slices.ContainsFunc(r.puts, func(pt Put) bool { return match([]byte(pt.Space), []byte(pt.Key)) })
			} else {
				payload, err := s.readPayload(l)
				if err == nil {
					puts, err = putsAny(payload, match)
				}
				if err != nil {
					return nil, fmt.Errorf("storage: scan for erased values: %w", err)
				}
			}
			if puts {
				out = append(out, l)
			}
		}
		from = batch[len(batch)-1]
	}
	return out, nil
}
