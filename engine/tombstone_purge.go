package engine

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/j17-go/j17/engine/saga"
	"github.com/j17-go/j17/engine/schedule"
	"github.com/j17-go/j17/engine/snapshot"
	"github.com/j17-go/j17/storage"
)

// purgeCopies erases the copies of an erased stream's payload that live in the record space, so
// that, once storage.Erase returns, none of their bytes remain in any file:
//
//   - checkpoint states: a checkpoint of the aggregate alone is deleted, a root checkpoint of its
//     type loses that member ("m/<checkpoint id>/<aggregate id>", the layout
//     snapshot.CheckpointSpace documents), so restoring one cannot bring the payload back;
//   - scheduled events the stream triggered or targeted: their rendered data and last error are
//     cleared (the schedule itself stays listed, canceled by cancelSchedulesOf if it was pending);
//   - sagas the stream triggered: the trigger's data and metadata, the "@" snapshot, every step's
//     result and every error detail are cleared; a saga that awaited the stream loses that step's
//     result. A running saga goes on with the cleared state.
//
// Idempotency markers hold a hash of the request body and the answer's stream, indices and
// counts, never a payload, so they are left alone. Schedules and sagas are rewritten under the
// locks of the scheduler and the saga runner, so neither writes an older state back meanwhile.
// Running it again changes nothing: cleared values are recognized and skipped.
func (e *Engine) purgeCopies(p *pair, k storage.StreamKey) error {
	set := p.sagas
	set.run.Lock()
	defer set.run.Unlock()
	p.fireMu.Lock()
	defer p.fireMu.Unlock()
	deletes, err := checkpointCopies(p.store, k)
	if err != nil {
		return err
	}
	puts, err := scheduleCopies(p.store, k)
	if err != nil {
		return err
	}
	sagaPuts, cleared, err := sagaCopies(p.store, k)
	if err != nil {
		return err
	}
	// Called with nothing to erase, Erase still finishes any erasure a failure left pending.
	if err := p.store.Erase(append(puts, sagaPuts...), deletes); err != nil {
		return err
	}
	set.mu.Lock()
	for _, st := range cleared {
		if _, ok := set.running[st.ID]; ok {
			set.running[st.ID] = st
		}
	}
	set.mu.Unlock()
	return nil
}

func checkpointCopies(st storage.EventStore, k storage.StreamKey) ([]storage.Delete, error) {
	cps, err := snapshot.Checkpoints(st)
	if err != nil {
		return nil, err
	}
	var out []storage.Delete
	del := func(key string) { out = append(out, storage.Delete{Space: snapshot.CheckpointSpace, Key: key}) }
	for _, cp := range cps {
		switch {
		case cp.AggregateType != k.Type:
		case cp.AggregateID == k.ID:
			del("h/" + cp.ID)
			err := st.Scan(snapshot.CheckpointSpace, "m/"+cp.ID+"/", func(key string, _ []byte) error {
				del(key)
				return nil
			})
			if err != nil {
				return nil, err
			}
		case cp.Root:
			key := "m/" + cp.ID + "/" + k.ID
			if _, err := st.Get(snapshot.CheckpointSpace, key); errors.Is(err, storage.ErrNotFound) {
				continue
			} else if err != nil {
				return nil, err
			}
			del(key)
		}
	}
	return out, nil
}

var jsonNull = json.RawMessage("null")

func scheduleCopies(st storage.EventStore, k storage.StreamKey) ([]storage.Put, error) {
	var out []storage.Put
	err := st.Scan(schedule.Space, schedule.RecordKey(""), func(key string, v []byte) error {
		r, err := schedule.DecodeRecord(v)
		if err != nil {
			return err
		}
		source := r.SourceType == k.Type && r.SourceID == k.ID
		target := r.AggregateType == k.Type && r.AggregateID == k.ID
		if !source && !target || bytes.Equal(r.Data, jsonNull) && r.LastError == "" {
			return nil
		}
		r.Data, r.LastError = jsonNull, ""
		out = append(out, storage.Put{Space: schedule.Space, Key: key, Value: r.Encode()})
		return nil
	})
	return out, err
}

func sagaCopies(st storage.EventStore, k storage.StreamKey) ([]storage.Put, []*saga.State, error) {
	var puts []storage.Put
	var cleared []*saga.State
	err := st.Scan(sagaSpace, "", func(key string, v []byte) error {
		s, err := saga.Decode(v)
		if err != nil {
			return err
		}
		c := s.Clone()
		if s.Trigger.AggregateType == k.Type && s.Trigger.ID == k.ID {
			c.Trigger.Data, c.Trigger.Metadata, c.Snapshot = jsonNull, nil, nil
			for i := range c.Steps {
				c.Steps[i].Result = nil
				if c.Steps[i].Error != nil {
					c.Steps[i].Error.Detail = ""
				}
			}
			if c.Error != nil {
				c.Error.Detail = ""
			}
		} else {
			for i := range c.Steps {
				if c.Steps[i].AwaitType == k.Type && c.Steps[i].AwaitID == k.ID {
					c.Steps[i].Result = nil
				}
			}
		}
		after := c.Encode()
		if bytes.Equal(after, s.Encode()) {
			return nil
		}
		puts = append(puts, storage.Put{Space: sagaSpace, Key: key, Value: after})
		cleared = append(cleared, c)
		return nil
	})
	return puts, cleared, err
}
