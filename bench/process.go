package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat on Linux.
const clockTicks = 100

// processTree returns pid and all its descendants.
func processTree(pid int) []int {
	children := map[int][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		p, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if fs := statFields(p); len(fs) > 2 {
			if pp, err := strconv.Atoi(fs[1]); err == nil {
				children[pp] = append(children[pp], p)
			}
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// statFields returns the fields of /proc/<pid>/stat after the command name, so that index 0 is
// the state, 1 the parent pid, 11 utime and 12 stime.
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// cpuSeconds is the CPU time the processes have run. It sums the scheduler's nanosecond count
// of every thread (/proc/<pid>/task/<tid>/schedstat): the tick-sampled utime and stime miss most
// of the time of processes that run in short bursts, such as Postgres backends at many
// connections. Threads that have exited are not counted; the servers keep theirs.
func cpuSeconds(pids []int) float64 {
	var secs float64
	for _, p := range pids {
		if ns, ok := threadsRuntime(p); ok {
			secs += ns / 1e9
			continue
		}
		fs := statFields(p)
		if len(fs) < 13 {
			continue
		}
		u, _ := strconv.ParseFloat(fs[11], 64)
		st, _ := strconv.ParseFloat(fs[12], 64)
		secs += (u + st) / clockTicks
	}
	return secs
}

// threadsRuntime sums the time on CPU, in nanoseconds, of the threads of pid.
func threadsRuntime(pid int) (float64, bool) {
	files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	var ns float64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fs := strings.Fields(string(b))
		if len(fs) == 0 {
			return 0, false
		}
		v, _ := strconv.ParseFloat(fs[0], 64)
		ns += v
	}
	return ns, len(files) > 0
}

// memoryMB is the memory of the processes in MiB: the sum of their proportional set sizes
// (Pss), so that memory they share, like Postgres's shared buffers, counts once.
func memoryMB(pids []int) float64 {
	var kb float64
	for _, p := range pids {
		kb += statusKB("/proc/"+strconv.Itoa(p)+"/smaps_rollup", "Pss")
	}
	return kb / 1024
}

// statusKB reads a "Field: N kB" line of a /proc file.
func statusKB(file, field string) float64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			if fs := strings.Fields(v); len(fs) > 0 {
				n, _ := strconv.ParseFloat(fs[0], 64)
				return n
			}
		}
	}
	return 0
}

// sampleMemory starts watching the memory of sys and returns the function that stops and
// returns the peak in MiB; pss is memoryMB, or a stand-in in tests. A single process has its
// exact peak in VmHWM (reset by resetPeak before), read once at the end; only a tree of
// processes is sampled, every 100ms. Reading smaps_rollup walks the page tables of the whole
// process under its mmap lock: for a server holding 1.4 GB it took 20-30 ms of kernel time, so
// sampling a single process every 100ms took a fifth of a core from the measured system and
// stalled its page faults, to learn a number VmHWM gives exactly.
func sampleMemory(sys System, pss func(pids []int) float64) func() float64 {
	stop, done := make(chan struct{}), make(chan float64)
	go func() {
		var peak float64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if pids := sys.PIDs(); len(pids) > 1 {
				peak = max(peak, pss(pids))
			}
			select {
			case <-stop:
				done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(stop)
		peak := <-done
		if pids := sys.PIDs(); len(pids) == 1 {
			peak = max(peak, statusKB("/proc/"+strconv.Itoa(pids[0])+"/status", "VmHWM")/1024)
		}
		return peak
	}
}

// resetPeak restarts the peak-RSS count (VmHWM) of the processes, so a run measures its own peak.
// Kernels that refuse leave the peak since process start, which can only be higher.
func resetPeak(pids []int) {
	for _, p := range pids {
		_ = os.WriteFile("/proc/"+strconv.Itoa(p)+"/clear_refs", []byte("5"), 0)
	}
}

// dirBytes is the space the files under dir take on disk.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}
