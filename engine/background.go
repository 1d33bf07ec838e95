package engine

import (
	"sync"
	"time"
)

// background is one of the engine's goroutines that act on every open pair at a period until
// Close: the scheduler and the idempotency sweeper.
type background struct {
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// startBackground runs first, when not nil, then act every period, each with the channel that
// closes when the goroutine is asked to stop, so that a long action can end early.
func startBackground(period time.Duration, first func(), act func(stop <-chan struct{})) *background {
	b := &background{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		if first != nil {
			first()
		}
		tk := time.NewTicker(period)
		defer tk.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-tk.C:
				act(b.stop)
			}
		}
	}()
	return b
}

// halt stops the goroutine and waits until its current action ended; a nil b does nothing.
func (b *background) halt() {
	if b == nil {
		return
	}
	b.stopOnce.Do(func() { close(b.stop) })
	<-b.done
}
