package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/snapshot"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage"
	"golang.org/x/crypto/bcrypt"
)

const counterSpec = `{"agent_types":["user"],"aggregate_types":{"counter":{"events":{"was_incremented":{"schema":{"type":"object"},"handler":[{"increment":{"target":"count","by":BY}}]}}}}}`

const actorID = "a0000000-0000-4000-a000-000000000001"

type fixture struct {
	e   *Engine
	ctl *control.Store
	t   Target
}

func newFixture(t *testing.T, opts Options) *fixture {
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
	f := &fixture{ctl: ctl, t: Target{Instance: inst.ID, Environment: control.EnvStaging}}
	f.deploy(t, 1)
	opts.DataDir, opts.Control, opts.NoSync = dir, ctl, true
	if f.e, err = New(opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.e.Close() })
	return f
}

// deploy deploys the counter spec whose handler increments by by, and tells the engine.
func (f *fixture) deploy(t *testing.T, by int) {
	t.Helper()
	doc := []byte(strings.Replace(counterSpec, "BY", fmt.Sprint(by), 1))
	sp, report := spec.Load(doc)
	if !report.OK() {
		t.Fatal(report.Err())
	}
	v, err := f.ctl.DeploySpec(f.t.Instance, f.t.Environment, "", func(*control.SpecVersion) ([]byte, error) { return doc, nil })
	if err != nil {
		t.Fatal(err)
	}
	if f.e != nil {
		f.e.SpecDeployed(f.t, v.Version, sp)
	}
}

func (f *fixture) write(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		_, err := f.e.Write(f.t, WriteInput{AggregateType: "counter", ID: "global", EventType: "was_incremented",
			Body: []byte(`{"data":{},"metadata":{"actor":{"type":"user","id":"` + actorID + `"}}}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (f *fixture) read(t *testing.T, sync bool) string {
	t.Helper()
	b, err := f.e.Aggregate(f.t, "counter", "global", ReadQuery{Synchronous: sync})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) store(t *testing.T) storage.EventStore {
	t.Helper()
	p, err := f.e.open(f.t)
	if err != nil {
		t.Fatal(err)
	}
	return p.store
}

var key = storage.StreamKey{Type: "counter", ID: "global"}

func TestReadSavesSnapshotsEveryN(t *testing.T) {
	f := newFixture(t, Options{SnapshotEvery: 100})
	f.write(t, 150)
	if got := f.read(t, true); !strings.Contains(got, `"count":150`) {
		t.Fatalf("read %s, want count 150", got)
	}
	snap, ok, err := f.store(t).GetSnapshot(key)
	if err != nil || !ok || snap.Length != 150 {
		t.Fatalf("snapshot after reading 150 events: %+v %v %v; want one at length 150", snap, ok, err)
	}
	f.write(t, 50)
	f.read(t, true)
	if snap, _, _ := f.store(t).GetSnapshot(key); snap.Length != 150 {
		t.Errorf("snapshot moved to %d after 50 more events, want it kept at 150 (interval 100)", snap.Length)
	}
}

// TestReadStartsFromTheSnapshot plants a snapshot whose state no replay could give: a read that
// shows it proves the read replayed only the tail.
func TestReadStartsFromTheSnapshot(t *testing.T) {
	f := newFixture(t, Options{SnapshotEvery: 1000})
	f.write(t, 70)
	m := f.e.pairs[f.t].model.Load()
	if err := snapshot.Save(f.store(t), key, m.types["counter"].fingerprint, 65, []byte(`{"count":1000}`)); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, true); !strings.Contains(got, `"count":1005`) {
		t.Fatalf("read %s, want count 1005 (snapshot 1000 at 65, plus 5 events)", got)
	}
}

// TestDeployRetiresSnapshotsOfChangedHandlers: the planted snapshot stops counting once the
// handler changes, and counts again under a deploy that keeps the type's definition.
func TestDeployRetiresSnapshotsOfChangedHandlers(t *testing.T) {
	f := newFixture(t, Options{SnapshotEvery: 1000})
	f.write(t, 70)
	m := f.e.pairs[f.t].model.Load()
	if err := snapshot.Save(f.store(t), key, m.types["counter"].fingerprint, 65, []byte(`{"count":1000}`)); err != nil {
		t.Fatal(err)
	}
	f.deploy(t, 2)
	if got := f.read(t, false); !strings.Contains(got, `"count":140`) {
		t.Fatalf("read after a handler change %s, want count 140 from a full replay", got)
	}
}

func TestCacheServesOnlyTheCurrentLength(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(t, 2)
	if got := f.read(t, false); !strings.Contains(got, `"count":2`) {
		t.Fatalf("read %s", got)
	}
	f.write(t, 1)
	if got := f.read(t, false); !strings.Contains(got, `"count":3`) {
		t.Fatalf("cached read after a write %s, want count 3", got)
	}
}

func TestWriteWithoutSpecIsNotFound(t *testing.T) {
	f := newFixture(t, Options{})
	other := Target{Instance: f.t.Instance, Environment: control.EnvProd}
	_, err := f.e.Write(other, WriteInput{AggregateType: "counter", ID: "global", EventType: "was_incremented", Body: []byte(`{}`)})
	if !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("write to an environment without a spec: %v, want not found", err)
	}
}

func TestClosedEngineRefuses(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Length(f.t, "counter", "global"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Length after Close: %v, want ErrClosed", err)
	}
}

// TestCacheMissesAfterARewrite: an erasure rewrites a stream at the same length; the cached state
// of the old history must not be served.
func TestCacheMissesAfterARewrite(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(t, 2)
	if got := f.read(t, false); !strings.Contains(got, `"count":2`) {
		t.Fatalf("read %s", got)
	}
	_, err := f.store(t).Rewrite(key, func(ev storage.Event) (storage.NewEvent, error) {
		return storage.NewEvent{Type: "was_erased", Data: ev.Data, Metadata: ev.Metadata, Timestamp: ev.Timestamp}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, false); strings.Contains(got, `"count"`) {
		t.Fatalf("read after a rewrite %s, want the state of the rewritten events (no count)", got)
	}
}
