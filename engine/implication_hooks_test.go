package engine

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/engine/write"
	"github.com/j17-go/j17/storage"
)

// TestAppendImplied checks that implied events land in one append per stream, in the order the
// streams were first implied, each keeping its events' order, after the appends already there;
// with few streams and with more than a linear search handles.
func TestAppendImplied(t *testing.T) {
	trigger := storage.StreamKey{Type: "order", ID: "o1"}
	for _, streams := range []int{1, 3, linearStreams, linearStreams + 1, 3 * linearStreams} {
		t.Run("streams="+strconv.Itoa(streams), func(t *testing.T) {
			var events []implication.Implied
			for i := 0; i < 3*streams; i++ {
				// Round-robin over the streams, the trigger's own among them.
				k := storage.StreamKey{Type: "inventory", ID: fmt.Sprintf("sku%d", i%streams)}
				if i%streams == 1 {
					k = trigger
				}
				events = append(events, implication.Implied{Stream: k, Event: storage.NewEvent{Type: "e", Data: []byte(strconv.Itoa(i))}})
			}
			rec := &storage.Record{Appends: []storage.Append{{Stream: trigger, Events: []storage.NewEvent{{Type: "t"}}}}}
			appendImplied(rec, events)

			want := []storage.Append{{Stream: trigger, Events: []storage.NewEvent{{Type: "t"}}}}
			at := map[storage.StreamKey]int{}
			for _, im := range events {
				i, ok := at[im.Stream]
				if !ok {
					i = len(want)
					at[im.Stream] = i
					want = append(want, storage.Append{Stream: im.Stream, Expect: storage.Expect{Kind: storage.Skip}})
				}
				want[i].Events = append(want[i].Events, im.Event)
			}
			if !reflect.DeepEqual(rec.Appends, want) {
				t.Errorf("got %+v, want %+v", rec.Appends, want)
			}
			// Appending to one stream's events must not overwrite the next stream's.
			if len(rec.Appends) > 2 {
				a := rec.Appends[1]
				_ = append(a.Events, storage.NewEvent{Type: "x"})
				if rec.Appends[2].Events[0].Type != "e" {
					t.Errorf("appends share their events' room")
				}
			}
		})
	}
}

// statelessSpec has triggers whose implications read no state, read "@", or start a saga.
const statelessSpec = `{"agent_types":["user"],"aggregate_types":{
 "order":{"events":{
  "was_placed":{"schema":{"type":"object"},"handler":[],
   "implications":[{"emit":{"aggregate_type":"log","id":"$.metadata.actor.id","event_type":"was_noted","data":{"order":"$.key"}}}]},
  "was_checked":{"schema":{"type":"object"},"handler":[],
   "implications":[{"condition":{"exists":"@.open"},"emit":{"aggregate_type":"log","id":"$.metadata.actor.id","event_type":"was_noted","data":{}}}]},
  "was_opened":{"schema":{"type":"object"},"handler":[]}}},
 "log":{"events":{"was_noted":{"schema":{"type":"object"},"handler":[]}}}},
 "modules":{"sagas":{"follow":{"trigger":{"aggregate_type":"order","event_type":"was_opened"},
  "steps":[{"name":"note","emit":{"aggregate_type":"log","id":"$.id","event_type":"was_noted","data":{}}}]}}}}`

// A write commits without internal OCC only when no hook's work depends on the trigger
// stream's state: implications that read none, and no saga to snapshot it.
func TestWriteHooksStateless(t *testing.T) {
	f := newSpecFixture(t, statelessSpec)
	e := f.open(t)
	defer e.Close()
	p, err := e.open(f.t)
	if err != nil {
		t.Fatal(err)
	}
	m := p.model.Load()
	body := []byte(`{"data":{},"metadata":{"actor":{"type":"user","id":"` + actorID + `"}}}`)
	for event, want := range map[string]bool{"was_placed": true, "was_checked": false, "was_opened": false} {
		plan, err := write.Prepare(m.spec, m.rules, write.Input{AggregateType: "order", ID: actorID, EventType: event, Body: body, Now: f.clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		hooks := e.newWriteHooks(p, m, f.clock.Now(), 0)
		if _, got := hooks.options(plan); got != want {
			t.Errorf("%s: stateless %v, want %v", event, got, want)
		}
		hooks.release()
	}
}
