package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DescribeMachine reads the CPU, memory and kernel from /proc and measures the latency of a
// 4 KiB write plus fsync, fsyncs times, in dir (the disk the systems will write to).
func DescribeMachine(dir string, fsyncs int) (Machine, error) {
	m := Machine{Cores: runtime.NumCPU(), CPU: procField("/proc/cpuinfo", "model name")}
	if kb, err := strconv.ParseFloat(strings.Fields(procField("/proc/meminfo", "MemTotal") + " 0")[0], 64); err == nil {
		m.MemoryGB = kb / (1 << 20)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.Disk = diskOf(dir)
	h, err := fsyncLatency(dir, fsyncs)
	if err != nil {
		return m, err
	}
	m.FsyncP50us = float64(h.Quantile(0.50)) / 1e3
	m.FsyncP99us = float64(h.Quantile(0.99)) / 1e3
	return m, nil
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(file, key string) string {
	f, err := os.Open(file)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// diskOf names the filesystem holding dir: its device, type and size.
func diskOf(dir string) string {
	abs, _ := filepath.Abs(dir)
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	best, desc := "", "unknown"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 {
			continue
		}
		mnt := fs[1]
		if (abs == mnt || strings.HasPrefix(abs, strings.TrimSuffix(mnt, "/")+"/")) && len(mnt) >= len(best) {
			best, desc = mnt, fs[0]+" ("+fs[2]+")"
		}
	}
	var st syscall.Statfs_t
	if syscall.Statfs(abs, &st) == nil {
		desc += fmt.Sprintf(", %.0f GB", float64(st.Blocks)*float64(st.Bsize)/1e9)
	}
	return desc
}

func fsyncLatency(dir string, n int) (*Histogram, error) {
	f, err := os.CreateTemp(dir, "fsync-probe-")
	if err != nil {
		return nil, fmt.Errorf("bench: fsync probe: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	h := &Histogram{}
	for range max(n, 1) {
		t := time.Now()
		if _, err := f.Write(buf); err != nil {
			return nil, fmt.Errorf("bench: fsync probe: %w", err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("bench: fsync probe: %w", err)
		}
		h.Record(time.Since(t))
	}
	return h, nil
}
