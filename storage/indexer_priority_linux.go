//go:build linux

package storage

import (
	"log/slog"
	"runtime"
	"syscall"
	"time"
)

// lowerIndexerPriority pins the calling goroutine (the indexer) to its thread and raises that
// thread's nice value by indexerNice, up to 19. On Linux a nice value belongs to a thread, so
// the rest of the process keeps its priority; the thread ends with the goroutine, never going
// back to serve others. The process's main thread is given back and another one taken: tools
// such as ps show its nice value as the process's, and Go cannot end it when the goroutine
// exits. A failure is logged and the indexer runs at the process's priority.
func lowerIndexerPriority(log *slog.Logger) {
	runtime.LockOSThread()
	for tries := 0; syscall.Gettid() == syscall.Getpid(); tries++ {
		runtime.UnlockOSThread()
		if tries == 100 {
			log.Warn("storage: the index writer keeps its priority: it runs on the main thread")
			return
		}
		time.Sleep(time.Millisecond)
		runtime.LockOSThread()
	}
	tid := syscall.Gettid()
	// The raw getpriority returns 20 minus the nice value.
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err == nil {
		err = syscall.Setpriority(syscall.PRIO_PROCESS, tid, min(20-raw+indexerNice, 19))
	}
	if err != nil {
		log.Warn("storage: could not lower the index writer's priority", "err", err)
	}
}
