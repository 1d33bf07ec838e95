package wal

import (
	"bytes"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
)

// crashFS is an in-memory FS that remembers what was made durable: file contents as of their last
// Sync, directory entries as of their directory's last SyncDir. crash() returns the filesystem a
// machine would find after losing power now.
type crashFS struct {
	mu      sync.Mutex
	names   map[string]*inode // the namespace as processes see it
	durable map[string]*inode // the namespace as of each directory's last SyncDir
	stall   chan struct{}     // when set, Sync blocks until it is closed
	stalled chan struct{}     // receives once for every Sync that blocks on stall
	locks   map[string]bool
}

type inode struct {
	data   []byte
	synced []byte
}

func newCrashFS() *crashFS {
	return &crashFS{names: map[string]*inode{}, durable: map[string]*inode{}}
}

func (c *crashFS) MkdirAll(string) error { return nil }

func (c *crashFS) List(dir string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for p := range c.names {
		if filepath.Dir(p) == filepath.Clean(dir) {
			out = append(out, filepath.Base(p))
		}
	}
	slices.Sort(out)
	return out, nil
}

func (c *crashFS) Create(name string) (File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ino := &inode{}
	c.names[name] = ino
	return &memFile{c: c, ino: ino}, nil
}

func (c *crashFS) Open(name string) (File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ino, ok := c.names[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{c: c, ino: ino}, nil
}

func (c *crashFS) Rename(oldname, newname string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ino, ok := c.names[oldname]
	if !ok {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	delete(c.names, oldname)
	c.names[newname] = ino
	return nil
}

func (c *crashFS) Remove(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.names[name]; !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(c.names, name)
	return nil
}

func (c *crashFS) Lock(name string) (io.Closer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.locks[name] {
		return nil, ErrLocked
	}
	if c.locks == nil {
		c.locks = map[string]bool{}
	}
	c.locks[name] = true
	return memLock{c, name}, nil
}

type memLock struct {
	c    *crashFS
	name string
}

func (m memLock) Close() error {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	delete(m.c.locks, m.name)
	return nil
}

func (c *crashFS) SyncDir(dir string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	dir = filepath.Clean(dir)
	for p := range c.durable {
		if filepath.Dir(p) == dir {
			delete(c.durable, p)
		}
	}
	for p, ino := range c.names {
		if filepath.Dir(p) == dir {
			c.durable[p] = ino
		}
	}
	return nil
}

// stallSyncs makes every Sync block until crash.
func (c *crashFS) stallSyncs() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stall = make(chan struct{})
	c.stalled = make(chan struct{}, 1)
}

// waitStalled returns once a Sync is blocked, that is once the flusher has written a group.
func (c *crashFS) waitStalled() {
	c.mu.Lock()
	ch := c.stalled
	c.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// unstall lets blocked and later Syncs through again.
func (c *crashFS) unstall() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stall != nil {
		close(c.stall)
		c.stall = nil
		c.stalled = nil
	}
}

// crash returns what survives a power loss now: durable names with their synced contents, plus
// the first torn bytes of each file's unsynced writes from the first byte they changed (a write cut
// short), whether they appended or overwrote preallocated space.
func (c *crashFS) crash(torn int) *crashFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := newCrashFS()
	for p, ino := range c.durable {
		data := slices.Clone(ino.synced)
		if from := firstChange(ino.synced, ino.data); torn > 0 && from < len(ino.data) {
			to := min(from+torn, len(ino.data))
			if to > len(data) {
				data = append(data, make([]byte, to-len(data))...)
			}
			copy(data[from:to], ino.data[from:to])
		}
		n := &inode{data: data, synced: slices.Clone(data)}
		out.names[p] = n
		out.durable[p] = n
	}
	return out
}

// firstChange returns the first offset at which now differs from synced, or len(now) if it only
// shrank or did not change.
func firstChange(synced, now []byte) int {
	n := min(len(synced), len(now))
	for at := 0; at < n; at += 4096 {
		end := min(at+4096, n)
		if bytes.Equal(synced[at:end], now[at:end]) {
			continue
		}
		for i := at; ; i++ {
			if synced[i] != now[i] {
				return i
			}
		}
	}
	return n
}

// file returns the current contents of name, for tests that damage it.
func (c *crashFS) file(name string) *inode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names[name]
}

type memFile struct {
	c   *crashFS
	ino *inode
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	if off >= int64(len(f.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	if need := int(off) + len(p); need > len(f.ino.data) {
		f.ino.data = append(f.ino.data, make([]byte, need-len(f.ino.data))...)
	}
	copy(f.ino.data[off:], p)
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.c.mu.Lock()
	stall := f.c.stall
	f.c.mu.Unlock()
	if stall != nil {
		f.c.stalled <- struct{}{}
		<-stall
	}
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	f.ino.synced = slices.Clone(f.ino.data)
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	if size < int64(len(f.ino.data)) {
		f.ino.data = f.ino.data[:size]
	}
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	return int64(len(f.ino.data)), nil
}

func (f *memFile) Close() error { return nil }
