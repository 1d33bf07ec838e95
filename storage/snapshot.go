package storage

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
)

// Snapshots are derived data kept outside the log and outside bbolt, one file per stream, so that
// dropping one (erasure) removes its bytes from every file: bbolt would keep freed pages around.
// They are written without fsync: a torn or missing snapshot fails its checksum and reads as
// absent, and the state is then replayed from the log.
//
// File layout (big-endian), part of the on-disk format:
//
//	+-----------+----------+----------+-------------+--------------+-------------+
//	| crc32c 4B | klen 4B  | key      | length 8B   | spec ver 8B  | state ...   |
//	+-----------+----------+----------+-------------+--------------+-------------+
//
// The checksum covers everything after it; the key (type 0 id) guards against hash collisions.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *Store) snapshotPath(k StreamKey) string {
	sum := sha256.Sum256(streamKeyBytes(nil, k))
	name := hex.EncodeToString(sum[:])
	return filepath.Join(s.dir, "snapshots", name[:2], name[2:]+".snap")
}

// PutSnapshot saves the aggregate state of a stream, replacing the previous snapshot.
func (s *Store) PutSnapshot(k StreamKey, snap Snapshot) error {
	if !k.valid() {
		return fmt.Errorf("%w: stream key %q", ErrInvalid, k.String())
	}
	key := streamKeyBytes(nil, k)
	b := make([]byte, 8, 8+len(key)+16+len(snap.State))
	b = append(b, key...)
	b = binary.BigEndian.AppendUint64(b, snap.Length)
	b = binary.BigEndian.AppendUint64(b, snap.SpecVersion)
	b = append(b, snap.State...)
	binary.BigEndian.PutUint32(b[4:], uint32(len(key)))
	binary.BigEndian.PutUint32(b, crc32.Checksum(b[4:], castagnoli))
	path := s.snapshotPath(k)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("storage: snapshot dir: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("storage: write snapshot: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("storage: write snapshot: %w", err)
	}
	return nil
}

// GetSnapshot returns the latest snapshot of a stream, and false when there is none (or it is
// unreadable). The caller compares SpecVersion and Length with what it needs.
func (s *Store) GetSnapshot(k StreamKey) (Snapshot, bool, error) {
	b, err := os.ReadFile(s.snapshotPath(k))
	if errors.Is(err, os.ErrNotExist) {
		return Snapshot{}, false, nil
	}
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("storage: read snapshot: %w", err)
	}
	key := streamKeyBytes(nil, k)
	if len(b) < 8+len(key)+16 || binary.BigEndian.Uint32(b) != crc32.Checksum(b[4:], castagnoli) ||
		binary.BigEndian.Uint32(b[4:]) != uint32(len(key)) || string(b[8:8+len(key)]) != string(key) {
		s.log.Warn("storage: ignoring unreadable snapshot", "stream", k.String())
		return Snapshot{}, false, nil
	}
	b = b[8+len(key):]
	snap := Snapshot{Length: binary.BigEndian.Uint64(b), SpecVersion: binary.BigEndian.Uint64(b[8:]), State: b[16:]}
	length, err := s.Length(k)
	if err != nil {
		return Snapshot{}, false, err
	}
	if snap.Length > length {
		// A snapshot ahead of the log belongs to a history that no longer exists.
		return Snapshot{}, false, nil
	}
	return snap, true, nil
}

// DropSnapshot removes a stream's snapshot; a missing one is not an error.
func (s *Store) DropSnapshot(k StreamKey) error {
	err := os.Remove(s.snapshotPath(k))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("storage: drop snapshot: %w", err)
	}
	return nil
}
