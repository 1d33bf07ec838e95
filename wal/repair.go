package wal

import (
	"fmt"
	"os"
	"path/filepath"
)

// RepairReport says what Repair cut. An empty File means the log was sound and nothing was cut.
// CutFile is a directory in the log directory holding a copy of everything cut: the bad file's
// bytes from Offset on as NNNNNNNN.seg.tail, and every later segment whole.
type RepairReport struct {
	File     string
	Offset   int64
	CutFile  string
	BytesCut int64
}

// Repair truncates the log in dir at its first bad record, the way Open would refuse to. The
// segments after it are moved aside into the cut copy too, so the log ends where the damage
// starts. A preallocated all-zero tail, which Open keeps (last segment) or trims (sealed
// segment), is not damage and is left alone. It fails with ErrLocked while a Log has the
// directory open.
//
// Order of work, so that a crash part-way leaves either the old log or a smaller one, never a lost
// copy: copy the tail and fsync it, move the later segments into the cut directory and fsync both
// directories, then truncate and fsync the bad file.
func Repair(dir string) (RepairReport, error) {
	fs := OSFS{}
	lock, err := fs.Lock(filepath.Join(dir, lockName))
	if err != nil {
		return RepairReport{}, err
	}
	defer lock.Close()
	nums, err := listSegments(fs, dir, discardLogger())
	if err != nil {
		return RepairReport{}, err
	}
	for i, n := range nums {
		s, err := openSealed(fs, dir, n)
		if err != nil {
			return RepairReport{}, err
		}
		off, why, err := firstBad(s, s.size)
		size := s.size
		zeros := false
		if err == nil && why != "" {
			zeros, err = preallocatedTail(s, off, size, i == len(nums)-1)
		}
		s.release()
		if err != nil {
			return RepairReport{}, err
		}
		if why == "" || zeros {
			continue
		}
		return cut(dir, nums[i:], off, size)
	}
	return RepairReport{}, nil
}

// cut moves aside the bytes of segment nums[0] from off on and the segments nums[1:].
func cut(dir string, nums []uint32, off, size int64) (RepairReport, error) {
	bad := segPath(dir, nums[0])
	rep := RepairReport{File: bad, Offset: off, BytesCut: size - off}
	cutDir, err := newCutDir(dir)
	if err != nil {
		return rep, err
	}
	rep.CutFile = cutDir

	src, err := os.OpenFile(bad, os.O_RDWR, 0)
	if err != nil {
		return rep, fmt.Errorf("wal: open %s: %w", bad, err)
	}
	defer src.Close()
	tail := make([]byte, size-off)
	if _, err := src.ReadAt(tail, off); err != nil {
		return rep, fmt.Errorf("wal: read %s: %w", bad, err)
	}
	if err := writeFileSync(filepath.Join(cutDir, segName(nums[0])+".tail"), tail); err != nil {
		return rep, err
	}
	for _, n := range nums[1:] {
		from, to := segPath(dir, n), filepath.Join(cutDir, segName(n))
		st, err := os.Stat(from)
		if err != nil {
			return rep, fmt.Errorf("wal: stat %s: %w", from, err)
		}
		if err := os.Rename(from, to); err != nil {
			return rep, fmt.Errorf("wal: move %s aside: %w", from, err)
		}
		rep.BytesCut += st.Size()
	}
	if err := (OSFS{}).SyncDir(cutDir); err != nil {
		return rep, fmt.Errorf("wal: fsync %s: %w", cutDir, err)
	}
	if err := (OSFS{}).SyncDir(dir); err != nil {
		return rep, fmt.Errorf("wal: fsync %s: %w", dir, err)
	}
	if err := src.Truncate(off); err != nil {
		return rep, fmt.Errorf("wal: truncate %s: %w", bad, err)
	}
	if err := src.Sync(); err != nil {
		return rep, fmt.Errorf("wal: fsync %s: %w", bad, err)
	}
	return rep, nil
}

// newCutDir creates the first free repair-NNNN.cut directory in dir.
func newCutDir(dir string) (string, error) {
	for i := 1; ; i++ {
		p := filepath.Join(dir, fmt.Sprintf("repair-%04d.cut", i))
		err := os.Mkdir(p, 0o755)
		if err == nil {
			return p, nil
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("wal: create %s: %w", p, err)
		}
	}
}

// writeFileSync writes a new file and fsyncs it.
func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("wal: create %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("wal: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("wal: fsync %s: %w", path, err)
	}
	return f.Close()
}

// preallocatedTail reports whether the bytes of s from off to size are preallocated space that
// Open keeps or trims: all zero, and for a segment other than the last up to an aligned size.
func preallocatedTail(s *segment, off, size int64, last bool) (bool, error) {
	if !last {
		return untrimmedTail(s, off, size)
	}
	r := segReader{s: s, limit: size}
	rest, err := r.bytes(off, int(size-off))
	if err != nil {
		return false, err
	}
	return allZero(rest), nil
}
