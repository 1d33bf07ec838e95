package engine

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/j17-go/j17/engine/control"
)

// DefaultSchedulerPoll is how often the scheduler looks for due events: well within the
// second of precision promised for firing.
const DefaultSchedulerPoll = 500 * time.Millisecond

// scheduler is the engine's one goroutine that fires due scheduled events of every pair.
type scheduler struct {
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// startScheduler opens every pair found in the data directory, so that schedules fire after a
// restart even before a request reaches their pair, then polls until stopScheduler.
func (e *Engine) startScheduler() {
	if e.opts.SchedulerPoll < 0 {
		return
	}
	poll := e.opts.SchedulerPoll
	if poll == 0 {
		poll = DefaultSchedulerPoll
	}
	s := &scheduler{stop: make(chan struct{}), done: make(chan struct{})}
	e.sched = s
	go func() {
		defer close(s.done)
		e.openExisting()
		tk := time.NewTicker(poll)
		defer tk.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tk.C:
				e.pollSchedules()
			}
		}
	}()
}

// stopScheduler stops the scheduler and waits for a pass in progress.
func (e *Engine) stopScheduler() {
	if e.sched == nil {
		return
	}
	e.sched.stopOnce.Do(func() { close(e.sched.stop) })
	<-e.sched.done
}

func (e *Engine) openExisting() {
	insts, err := os.ReadDir(e.opts.DataDir)
	if err != nil {
		return
	}
	for _, in := range insts {
		if !in.IsDir() {
			continue
		}
		for _, env := range []string{control.EnvProd, control.EnvStaging, control.EnvTest} {
			if _, err := os.Stat(filepath.Join(e.opts.DataDir, in.Name(), env)); err != nil {
				continue
			}
			if _, err := e.open(Target{Instance: in.Name(), Environment: env}); err != nil {
				e.log.Warn("scheduler cannot open environment", slog.String("instance", in.Name()), slog.String("environment", env), slog.Any("err", err))
			}
		}
	}
}

func (e *Engine) pollSchedules() {
	e.mu.Lock()
	pairs := make([]*pair, 0, len(e.pairs))
	for _, p := range e.pairs {
		pairs = append(pairs, p)
	}
	e.mu.Unlock()
	now := e.clock.Now()
	for _, p := range pairs {
		if _, err := e.fireDue(p, now); err != nil {
			e.log.Error("scheduler pass failed", slog.String("instance", p.target.Instance), slog.String("environment", p.target.Environment), slog.Any("err", err))
		}
	}
}
