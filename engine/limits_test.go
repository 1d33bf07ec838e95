package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/schedule"
)

// racers is how many writers race for the last places under a limit.
const racers = 64

// raceToLimit runs racers goroutines, each calling try until it is refused with a limit error
// (matched by refusal) and retrying conflicts; it returns how many calls succeeded.
func raceToLimit(t *testing.T, refusal string, try func(g, i int) error) int {
	t.Helper()
	var ok atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, racers)
	for g := 0; g < racers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				err := try(g, i)
				var pe *problem.Error
				switch {
				case err == nil:
					ok.Add(1)
				case errors.As(err, &pe) && errors.Is(pe.Kind, problem.ErrConflict):
				case errors.As(err, &pe) && errors.Is(pe.Kind, problem.ErrInvalid) && strings.Contains(pe.Message, refusal):
					return
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("unexpected error: %v", err)
	}
	return int(ok.Load())
}

// fanInScheduleSpec has every cart's event imply an event on the actor's hub, which schedules
// one: the schedules of writes to different carts all count against the one hub, and the
// implied appends take no lock on it, so nothing but the limit serializes the writers.
const fanInScheduleSpec = `{"agent_types":["user"],"aggregate_types":{
 "cart":{"events":{"had_item_added":{"schema":{"type":"object"},"handler":[],
   "implications":[{"emit":{"aggregate_type":"hub","id":"$.metadata.actor.id","event_type":"was_poked","data":{"cart":"$.key"}}}]}}},
 "hub":{"events":{"was_poked":{"schema":{"type":"object"},"handler":[],
   "implications":[{"schedule":{"delay":"5m","emit":{"aggregate_type":"note","id":"$.metadata.actor.id","event_type":"was_sent","data":{"cart":"$.data.cart"}}}}]}}},
 "note":{"events":{"was_sent":{"schema":{"type":"object"},"handler":[{"increment":{"target":"sent"}}]}}}}}`

// TestSchedulesPerAggregateLimitIsExactUnderRace races writers to many carts that each schedule
// an event from the same hub until refused: exactly 100 are accepted, exactly 100 are pending,
// also after a restart, and a refused write wrote nothing.
func TestSchedulesPerAggregateLimitIsExactUnderRace(t *testing.T) {
	f := newSpecFixture(t, fanInScheduleSpec)
	e := f.open(t)
	body := []byte(`{"data":{},"metadata":{"actor":{"type":"user","id":"` + actorID + `"}}}`)
	got := raceToLimit(t, "pending scheduled events; nothing was written", func(g, i int) error {
		cart := fmt.Sprintf("c0000000-0000-4000-a%03d-%012d", g, i)
		_, err := e.Write(f.t, WriteInput{AggregateType: "cart", ID: cart, EventType: "had_item_added", Body: body})
		return err
	})
	if got != schedule.MaxPerAggregate {
		t.Errorf("%d writes scheduled an event, want exactly %d", got, schedule.MaxPerAggregate)
	}
	if n := f.pending(t, e); n != schedule.MaxPerAggregate {
		t.Errorf("%d schedules pending, want %d", n, schedule.MaxPerAggregate)
	}
	b, err := e.Aggregate(f.t, "hub", actorID, ReadQuery{Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), fmt.Sprintf(`"length":%d`, schedule.MaxPerAggregate)) {
		t.Errorf("hub after the race: %s, want length %d", b, schedule.MaxPerAggregate)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = f.open(t)
	defer e.Close()
	if n := f.pending(t, e); n != schedule.MaxPerAggregate {
		t.Errorf("%d schedules pending after a restart, want %d", n, schedule.MaxPerAggregate)
	}
}

func (f *scheduleFixture) pending(t *testing.T, e *Engine) int {
	t.Helper()
	p, err := e.open(f.t)
	if err != nil {
		t.Fatal(err)
	}
	return p.sched.Pending()
}

// waitingSagaSpec starts a saga per flow that emits one event and then waits an hour for a
// reply: with the clock standing still, every started saga stays running.
const waitingSagaSpec = `{"agent_types":["user"],"aggregate_types":{"flow":{"events":{
 "was_started":{"schema":{"type":"object"},"handler":[]},
 "was_asked":{"schema":{"type":"object"},"handler":[]},
 "was_answered":{"schema":{"type":"object"},"handler":[]}}}},
 "modules":{"sagas":{"work":{"trigger":{"aggregate_type":"flow","event_type":"was_started"},"steps":[
  {"name":"ask","emit":{"aggregate_type":"flow","id":"$.id","event_type":"was_asked","data":{}},
   "await":{"aggregate_type":"flow","event_types":["was_answered"]},"timeout_ms":3600000}]}}}}`

// TestRunningSagasLimitIsExactUnderRace races writers that each start sagas until refused:
// exactly 100 start and run, and no refused trigger was written.
func TestRunningSagasLimitIsExactUnderRace(t *testing.T) {
	f := newSpecFixture(t, waitingSagaSpec)
	e := f.open(t)
	defer e.Close()
	body := []byte(`{"data":{},"metadata":{"actor":{"type":"user","id":"` + actorID + `"}}}`)
	var tried sync.Map
	got := raceToLimit(t, "sagas are already running", func(g, i int) error {
		id := fmt.Sprintf("c0000000-0000-4000-a%03d-%012d", g, i)
		tried.Store(id, true)
		_, err := e.Write(f.t, WriteInput{AggregateType: "flow", ID: id, EventType: "was_started", Body: body})
		return err
	})
	if got != MaxRunningSagas {
		t.Errorf("%d writes started a saga, want exactly %d", got, MaxRunningSagas)
	}
	views, total, err := e.Sagas(f.t, SagaQuery{Status: "running", Limit: MaxSagaPage})
	if err != nil {
		t.Fatal(err)
	}
	if total != MaxRunningSagas || len(views) != MaxRunningSagas {
		t.Errorf("%d sagas running, want %d", total, MaxRunningSagas)
	}
	written := 0
	tried.Range(func(k, _ any) bool {
		if _, err := e.Aggregate(f.t, "flow", k.(string), ReadQuery{Synchronous: true}); err == nil {
			written++
		}
		return true
	})
	if written != MaxRunningSagas {
		t.Errorf("%d flows were written, want only the %d whose saga started", written, MaxRunningSagas)
	}
}
