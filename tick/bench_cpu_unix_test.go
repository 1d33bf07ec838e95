//go:build unix

package tick

import "syscall"

// cpuNanos is the CPU time this process used so far. The machine is shared,
// so wall-clock figures include time spent waiting for a core; the cpu-ns
// metrics report what the code itself costs on one core.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
