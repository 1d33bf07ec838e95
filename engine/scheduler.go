package engine

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/j17-go/j17/engine/control"
)

// DefaultSchedulerPoll is how often the scheduler looks for due events: well within the
// second of precision promised for firing.
const DefaultSchedulerPoll = 500 * time.Millisecond

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
	e.sched = startBackground(poll, e.openExisting, func(<-chan struct{}) { e.pollSchedules() })
}

// stopScheduler stops the scheduler and waits for a pass in progress.
func (e *Engine) stopScheduler() {
	e.sched.halt()
}

// openExisting opens, once per engine, every pair found in the data directory, so that pending
// schedules fire and running sagas resume after a restart without waiting for a request. The
// scheduler and the saga runner both call it before their first pass; the second waits for the
// first's walk rather than repeating it.
func (e *Engine) openExisting() {
	e.openedExisting.Do(func() {
		insts, err := os.ReadDir(e.opts.DataDir)
		if err != nil {
			e.log.Warn("cannot list the data directory to open its environments", slog.Any("err", err))
			return
		}
		for _, inst := range insts {
			if !inst.IsDir() {
				continue
			}
			for _, env := range []string{control.EnvProd, control.EnvStaging, control.EnvTest} {
				if fi, err := os.Stat(filepath.Join(e.opts.DataDir, inst.Name(), env)); err != nil || !fi.IsDir() {
					continue
				}
				if _, err := e.open(Target{Instance: inst.Name(), Environment: env}); err != nil {
					e.log.Warn("cannot open an environment to resume its schedules and sagas", slog.String("instance", inst.Name()),
						slog.String("environment", env), slog.Any("err", err))
				}
			}
		}
	})
}

func (e *Engine) pollSchedules() {
	pairs := e.openPairs()
	now := e.clock.Now()
	for _, p := range pairs {
		if _, err := e.fireDue(p, now); err != nil {
			e.log.Error("scheduler pass failed", slog.String("instance", p.target.Instance), slog.String("environment", p.target.Environment), slog.Any("err", err))
		}
	}
}
