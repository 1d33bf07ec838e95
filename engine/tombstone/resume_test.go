package tombstone_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/tombstone"
)

// The stops an execution of the fixed story's tombstone passes (two streams to rewrite), as
// (step, occurrence).
var stops = []struct {
	step tombstone.Step
	nth  int
}{
	{tombstone.StepStarted, 1},
	{tombstone.StepRewritten, 1},
	{tombstone.StepRecorded, 1},
	{tombstone.StepRewritten, 2},
	{tombstone.StepRecorded, 2},
	{tombstone.StepFinishing, 1},
}

// stopAt returns a hook that runs act at the nth occurrence of step.
func stopAt(step tombstone.Step, nth int, act func() error) func(tombstone.Step) error {
	seen := 0
	return func(s tombstone.Step) error {
		if s != step {
			return nil
		}
		if seen++; seen == nth {
			return act()
		}
		return nil
	}
}

var errCrash = errors.New("simulated crash")

// reference runs the fixed story's tombstone without interruption and returns its export and
// final record.
func reference(t *testing.T) (string, tombstone.Tombstone) {
	t.Helper()
	f := open(t, t.TempDir(), &clock{now: start})
	f.fixedStory(t)
	ts, err := f.e.CreateTombstone(f.t, "user", alice, tombstone.Request{LegalBasis: "GDPR"})
	if err != nil {
		t.Fatal(err)
	}
	done, err := f.e.ExecuteTombstone(f.t, ts.ID, engine.TombstoneExecution{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	f.close(t)
	return export(t, f, ts.ID), done
}

// finishAndCompare reopens dir, checks the tombstone is executing, executes it again and compares
// the outcome with the reference.
func finishAndCompare(t *testing.T, dir, id, wantExport string, want tombstone.Tombstone) {
	t.Helper()
	f := open(t, dir, &clock{now: start})
	if got := status(t, f, id); got.Status != tombstone.StatusExecuting {
		t.Fatalf("after the crash: status %s, want executing", got.Status)
	}
	done, err := f.e.ExecuteTombstone(f.t, id, engine.TombstoneExecution{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range [][2]string{{"user", alice}, {"user", bob}, {"message", m1}, {"message", m2}, {"order", o1}} {
		if rep, err := f.e.VerifyChain(f.t, k[0], k[1]); err != nil || !rep.Valid {
			t.Errorf("verify-chain %s:%s after resume: got %+v, %v", k[0], k[1], rep, err)
		}
	}
	f.close(t)
	if fmt.Sprint(done.AffectedStreams) != fmt.Sprint(want.AffectedStreams) || done.PreTombstoneRoot != want.PreTombstoneRoot {
		t.Errorf("resumed: affected %v root %s, want %v root %s", done.AffectedStreams, done.PreTombstoneRoot, want.AffectedStreams, want.PreTombstoneRoot)
	}
	if got := export(t, f, id); got != wantExport {
		t.Errorf("resumed run's log differs from an uninterrupted run:\ngot  %s\nwant %s", got, wantExport)
	}
	if got := findings(t, dir, "ALICEfixed"); len(got) > 0 {
		t.Errorf("erased payload remains in %v", got)
	}
}

// TestResumeAfterStop stops an execution at each step through the test hook, reopens the store
// and executes again: the result is the uninterrupted one.
func TestResumeAfterStop(t *testing.T) {
	wantExport, want := reference(t)
	for _, s := range stops {
		t.Run(fmt.Sprintf("step=%s/n=%d", s.step, s.nth), func(t *testing.T) {
			dir := t.TempDir()
			f := open(t, dir, &clock{now: start})
			f.fixedStory(t)
			ts, err := f.e.CreateTombstone(f.t, "user", alice, tombstone.Request{LegalBasis: "GDPR"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.e.ExecuteTombstone(f.t, ts.ID, engine.TombstoneExecution{Force: true, Hook: stopAt(s.step, s.nth, func() error { return errCrash })})
			if !errors.Is(err, errCrash) {
				t.Fatalf("got %v, want the simulated crash", err)
			}
			f.close(t)
			finishAndCompare(t, dir, ts.ID, wantExport, want)
		})
	}
}

const childEnv = "J17_TOMBSTONE_KILL_CHILD"

// TestResumeAfterKill runs the execution in a child process that kills itself with SIGKILL at
// each step, then finishes it in this process.
func TestResumeAfterKill(t *testing.T) {
	wantExport, want := reference(t)
	for i, s := range stops {
		t.Run(fmt.Sprintf("step=%s/n=%d", s.step, s.nth), func(t *testing.T) {
			dir := t.TempDir()
			f := open(t, dir, &clock{now: start})
			f.fixedStory(t)
			ts, err := f.e.CreateTombstone(f.t, "user", alice, tombstone.Request{LegalBasis: "GDPR"})
			if err != nil {
				t.Fatal(err)
			}
			f.close(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$")
			cmd.Env = append(os.Environ(), childEnv+"="+dir+"|"+ts.ID+"|"+strconv.Itoa(i))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child: got %v, want death by SIGKILL; output:\n%s", err, out)
			}
			finishAndCompare(t, dir, ts.ID, wantExport, want)
		})
	}
}

// TestKillChild is the child of TestResumeAfterKill; it does nothing in a normal run.
func TestKillChild(t *testing.T) {
	arg := os.Getenv(childEnv)
	if arg == "" {
		t.Skip("runs only as the child of TestResumeAfterKill")
	}
	var dir, id string
	var i int
	parts := splitN(arg)
	dir, id = parts[0], parts[1]
	i, _ = strconv.Atoi(parts[2])
	f := open(t, dir, &clock{now: start})
	s := stops[i]
	_, err := f.e.ExecuteTombstone(f.t, id, engine.TombstoneExecution{Force: true, Hook: stopAt(s.step, s.nth, func() error {
		return syscall.Kill(os.Getpid(), syscall.SIGKILL)
	})})
	t.Fatalf("child survived its kill point: %v", err)
}

func splitN(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '|' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
