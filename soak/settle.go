package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// operator is the operator's session, for the /_admin routes of the soak's instance and
// environment.
type operator struct {
	c                    *client
	token, instance, env string
}

// runDue fires every schedule due within scheduleAhead (POST /_admin/scheduled/run_due).
func (o *operator) runDue() error {
	body := fmt.Appendf(nil, `{"now":%d}`, time.Now().Add(scheduleAhead).Unix())
	const path = "/_admin/scheduled/run_due"
	status, b, err := o.c.do("POST", path, o.token, body, "X-J17-Instance", o.instance, "X-J17-Environment", o.env)
	if err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("%w: POST %s: %d %s", ErrStatus, path, status, b)
	}
	return nil
}

// scheduleAhead is past the spec's delay of five minutes.
const scheduleAhead = 6 * time.Minute

// total returns the total of an /_admin listing ({"data": [...], "total": n}).
func (o *operator) total(path string) (int, error) {
	status, b, err := o.c.do("GET", path, o.token, nil, "X-J17-Instance", o.instance, "X-J17-Environment", o.env)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", path, err)
	}
	var ans struct{ Total *int }
	if status != 200 || json.Unmarshal(b, &ans) != nil || ans.Total == nil {
		return 0, fmt.Errorf("%w: GET %s: %d %s", ErrStatus, path, status, b)
	}
	return *ans.Total, nil
}

// settleTimeout bounds each wait of settle. run_due fires the pending schedules before it answers,
// and a saga's next step follows its awaited event at once, so a wait that long is a fault.
const settleTimeout = time.Minute

// settlePoll is the pause between two looks of a wait.
const settlePoll = 50 * time.Millisecond

// settle brings the reactive work of the acknowledged writes to its end once the workers have
// stopped: it confirms the charge of every saga still waiting for one, fires every pending
// schedule, and waits until none is pending and every acknowledged saga has completed. A
// dead-lettered schedule (one that failed to fire ten times) is an error.
func settle(ctx context.Context, w *workload, op *operator) error {
	if err := waitFor(ctx, "every saga asked for its charge", func() (bool, error) {
		for range w.uncharged.len() {
			w.charge(ctx)
		}
		return w.uncharged.len() == 0, w.bad.err()
	}); err != nil {
		return err
	}
	if err := op.runDue(); err != nil {
		return err
	}
	if err := waitFor(ctx, "no schedule pending", func() (bool, error) {
		n, err := op.total("/_admin/scheduled?status=pending&limit=1")
		return n == 0, err
	}); err != nil {
		return err
	}
	dead, err := op.total("/_admin/scheduled/dead_letters?limit=1")
	if err != nil {
		return err
	}
	if dead > 0 {
		return fmt.Errorf("%w: %d schedules dead-lettered", ErrLost, dead)
	}
	sagas := w.ledger.Snapshot().Sagas
	return waitFor(ctx, "every saga completed", func() (bool, error) {
		got, err := readStream(w.c, w.key, notificationStream)
		if err != nil {
			return false, err
		}
		done := countRefs(got, "checkout_completed", "checkout")
		for _, id := range sagas {
			if done[id] == 0 {
				return false, nil
			}
		}
		return true, nil
	})
}

// waitFor polls done until it holds, fails, or settleTimeout passes.
func waitFor(ctx context.Context, what string, done func() (bool, error)) error {
	deadline := time.Now().Add(settleTimeout)
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: waited %s in vain for: %s", ErrLost, settleTimeout, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settlePoll):
		}
	}
}
