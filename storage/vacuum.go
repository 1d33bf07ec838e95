package storage

import (
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// vacuumSuffix names the copy an index vacuum writes next to index.db before renaming it over.
const vacuumSuffix = ".vacuum"

// vacuumTxSize bounds the transactions of the copy.
const vacuumTxSize = 16 << 20

// vacuumIndex replaces index.db with a fresh copy of its live keys and values. bbolt frees the
// pages a transaction rewrites without clearing them, so after a record-space value is deleted
// its bytes stay in free pages of the file; the copy holds none of them. The indexer waits while
// the copy is made (commits and reads go on: reads from the old file, new records from the
// overlay) and readers wait only for the rename and reopen. A crash leaves either the old file,
// whose erasure job then runs again, or the new one; a leftover copy is removed at open.
// REQUIRES: s.rewriteMu held, so that nothing but the indexer writes to the index.
func (s *Store) vacuumIndex() error {
	path := filepath.Join(s.dir, "index.db")
	tmp := path + vacuumSuffix
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return err
	}
	// Mapping the copy at the size of the original up front spares bbolt the remaps (each of
	// which copies every node of the open transaction) as the copy grows.
	opts := boltOptions(s.opts.NoSync)
	if fi, err := os.Stat(path); err == nil {
		opts.InitialMmapSize = max(opts.InitialMmapSize, int(fi.Size()))
	}
	dst, err := bolt.Open(tmp, 0o644, opts)
	if err != nil {
		return fmt.Errorf("create index copy: %w", err)
	}
	s.dbMu.RLock()
	err = bolt.Compact(dst, s.db, vacuumTxSize)
	s.dbMu.RUnlock()
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copy index: %w", err)
	}
	s.hook("copied")
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if err := s.db.Close(); err != nil {
		s.fail(err)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		s.fail(err)
		return err
	}
	if !s.opts.NoSync {
		if err := syncDir(s.dir); err != nil {
			s.fail(err)
			return err
		}
	}
	db, err := bolt.Open(path, 0o644, boltOptions(s.opts.NoSync))
	if err != nil {
		s.fail(err)
		return fmt.Errorf("reopen index: %w", err)
	}
	s.db = db
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
