//go:build !unix

package tick

// cpuNanos is not measured here; the cpu-* metrics then read zero.
func cpuNanos() int64 { return 0 }
