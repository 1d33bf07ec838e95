package engine

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/spec"
	"golang.org/x/crypto/bcrypt"
)

const scheduleSpec = `{"agent_types":["user"],"aggregate_types":{
 "cart":{"events":{"had_item_added":{"schema":{"type":"object"},"handler":[],
   "implications":[{"schedule":{"delay":"5m","emit":{"aggregate_type":"note","id":"$.metadata.actor.id","event_type":"was_sent","data":{"cart":"$.key"}}}}]}}},
 "note":{"events":{"was_sent":{"schema":{"type":"object"},"handler":[{"increment":{"target":"sent"}}]}}}}}`

// manualClock is a clock a test moves by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// scheduleFixture is an engine over a data directory that survives reopening.
type scheduleFixture struct {
	dir   string
	ctl   *control.Store
	clock *manualClock
	t     Target
}

func newScheduleFixture(t *testing.T) *scheduleFixture {
	t.Helper()
	return newSpecFixture(t, scheduleSpec)
}

// newSpecFixture deploys doc to the staging environment of a new instance.
func newSpecFixture(t *testing.T, doc string) *scheduleFixture {
	t.Helper()
	dir := t.TempDir()
	ctl, err := control.Open(filepath.Join(dir, "control.db"), control.Options{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ctl.Close() })
	inst, err := ctl.CreateInstance("app")
	if err != nil {
		t.Fatal(err)
	}
	if _, report := spec.Load([]byte(doc)); !report.OK() {
		t.Fatal(report.Err())
	}
	f := &scheduleFixture{dir: dir, ctl: ctl, clock: &manualClock{now: time.Unix(1_700_000_000, 0)}, t: Target{Instance: inst.ID, Environment: control.EnvStaging}}
	if _, err := ctl.DeploySpec(f.t.Instance, f.t.Environment, "", func(*control.SpecVersion) ([]byte, error) { return []byte(doc), nil }); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *scheduleFixture) open(t *testing.T) *Engine {
	t.Helper()
	e, err := New(Options{DataDir: f.dir, Control: f.ctl, Clock: f.clock, NoSync: true, SchedulerPoll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (f *scheduleFixture) schedule(t *testing.T, e *Engine, cart string) {
	t.Helper()
	_, err := e.Write(f.t, WriteInput{AggregateType: "cart", ID: cart, EventType: "had_item_added",
		Body: []byte(`{"data":{},"metadata":{"actor":{"type":"user","id":"` + actorID + `"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
}

// waitSent waits, up to two seconds, for the note aggregate to count want fired events.
func (f *scheduleFixture) waitSent(t *testing.T, e *Engine, want string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		b, _ := e.Aggregate(f.t, "note", actorID, ReadQuery{Synchronous: true})
		if got = string(b); strings.Contains(got, `"sent":`+want+`,`) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("got note %s, want sent %s", got, want)
}

// TestSchedulerFiresDueEventsAndSurvivesRestart lets the scheduler goroutine fire a due event,
// then reopens the engine: the fired one stays fired and a pending one fires without any
// request reaching its environment.
func TestSchedulerFiresDueEventsAndSurvivesRestart(t *testing.T) {
	f := newScheduleFixture(t)
	e := f.open(t)
	f.schedule(t, e, "b0000000-0000-4000-a000-000000000001")
	f.clock.advance(4 * time.Minute)
	time.Sleep(50 * time.Millisecond)
	if b, err := e.Aggregate(f.t, "note", actorID, ReadQuery{}); err == nil {
		t.Fatalf("fired before its time: %s", b)
	}
	f.clock.advance(time.Minute)
	f.waitSent(t, e, "1")
	f.schedule(t, e, "b0000000-0000-4000-a000-000000000002")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = f.open(t)
	defer e.Close()
	f.clock.advance(5 * time.Minute)
	f.waitSent(t, e, "2")
	// The fired event and its fired marker are one record; the in-memory list of schedules
	// learns of it just after the commit, so it may trail the aggregate by a moment.
	var b []byte
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var err error
		if b, err = e.Scheduled(f.t, ScheduledQuery{Status: "fired"}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"total":2`) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(string(b), `"total":2`) {
		t.Errorf("got %s, want two fired schedules", b)
	}
	time.Sleep(30 * time.Millisecond)
	f.waitSent(t, e, "2")
}

// TestFireDueKeepsEachAggregatesOrder fires a pass of schedules that emit to a few aggregates:
// the pass fires them side by side, yet each aggregate receives its events in fire_at order,
// and every schedule fires once.
func TestFireDueKeepsEachAggregatesOrder(t *testing.T) {
	const doc = `{"agent_types":["user"],"aggregate_types":{
 "cart":{"events":{"had_item_added":{"schema":{"type":"object"},"handler":[],
   "implications":[{"schedule":{"delay":"5m","emit":{"aggregate_type":"note","id":"$.data.note","event_type":"was_sent","data":{"n":"$.data.n"}}}}]}}},
 "note":{"events":{"was_sent":{"schema":{"type":"object"},"handler":[{"append":{"target":"seen","value":"$.data.n"}}]}}}}}`
	const notes, perNote = 4, 100
	f := newSpecFixture(t, doc)
	// Durable, so that the fires wait for fsyncs as they do in production and overlap.
	e, err := New(Options{DataDir: f.dir, Control: f.ctl, Clock: f.clock, SchedulerPoll: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	noteID := func(k int) string { return fmt.Sprintf("c0000000-0000-4000-a000-%012d", k) }
	for n := range notes * perNote {
		body := fmt.Sprintf(`{"data":{"note":%q,"n":%d},"metadata":{"actor":{"type":"user","id":%q}}}`, noteID(n%notes), n, actorID)
		if _, err := e.Write(f.t, WriteInput{AggregateType: "cart", ID: fmt.Sprintf("b0000000-0000-4000-a000-%012d", n), EventType: "had_item_added", Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
		// Each schedule falls due a millisecond after the one before.
		f.clock.advance(time.Millisecond)
	}
	f.clock.advance(5 * time.Minute)
	p, err := e.open(f.t)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := e.fireDue(p, f.clock.Now()); err != nil || rep != (fireReport{Fired: notes * perNote}) {
		t.Fatalf("got %+v, %v; want %d fired", rep, err, notes*perNote)
	}
	if rep, err := e.fireDue(p, f.clock.Now()); err != nil || rep != (fireReport{}) {
		t.Fatalf("second pass: got %+v, %v; want nothing fired", rep, err)
	}
	for k := range notes {
		b, err := e.Aggregate(f.t, "note", noteID(k), ReadQuery{Synchronous: true})
		if err != nil {
			t.Fatal(err)
		}
		var state struct{ Data struct{ Seen []int } }
		if err := json.Unmarshal(b, &state); err != nil {
			t.Fatal(err)
		}
		want := make([]int, 0, perNote)
		for n := k; n < notes*perNote; n += notes {
			want = append(want, n)
		}
		if !slices.Equal(state.Data.Seen, want) {
			t.Errorf("note %d saw %v, want %v", k, state.Data.Seen, want)
		}
	}
}
