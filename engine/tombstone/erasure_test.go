package tombstone_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/engine/tombstone"
	"github.com/j17-go/j17/storage"
)

// TestErasureIsPhysical follows the Tombstones page: alice's stream and the message she sent
// are erased from every file, compressed or not; the message sent to her and her order stay.
// Copies of alice's payload outside her events go too: her checkpoint and her member of a root
// checkpoint, the data of a schedule her event rendered for another stream, and the trigger and
// "@" snapshot of the saga her event started.
func TestErasureIsPhysical(t *testing.T) {
	dir := t.TempDir()
	c := &clock{now: start}
	f := openSpec(t, dir, c, "spec_copies.json")
	s := f.story(t)
	for _, typ := range [][2]string{{"user", alice}, {"user", ""}} {
		if _, err := f.e.CreateCheckpoint(f.t, typ[0], typ[1]); err != nil {
			t.Fatal(err)
		}
	}
	f.close(t)
	for _, tok := range []string{s.alice, s.m1, s.m2, s.o1} {
		if !compressed(t, dir, tok) {
			t.Fatalf("token %s is not held only in compressed records before erasure; the test would prove nothing", tok)
		}
	}
	copies := spaceCopies(t, f, s.alice)
	for _, space := range []string{"checkpoints", "scheduled", "saga"} {
		if !slices.ContainsFunc(copies, func(c string) bool { return strings.HasPrefix(c, space+"/") }) {
			t.Fatalf("no value of space %s holds alice's payload before erasure (got %v); the test would prove less", space, copies)
		}
	}

	f = openSpec(t, dir, c, "spec_copies.json")
	for _, k := range [][2]string{{"user", alice}, {"message", m1}} {
		if _, err := f.e.Aggregate(f.t, k[0], k[1], engine.ReadQuery{}); err != nil {
			t.Fatal(err)
		}
	}
	snaps, _ := filepath.Glob(filepath.Join(f.storeDir(), "snapshots", "*"))
	if len(snaps) < 2 {
		t.Fatalf("reads left snapshots %v; want the erased streams' states on disk before erasure", snaps)
	}
	ts, err := f.e.CreateTombstone(f.t, "user", alice, tombstone.Request{LegalBasis: "GDPR Art. 17", RequestID: "req-1", RequestedBy: "dpo@example.com", GracePeriodDays: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ts.Status != tombstone.StatusPending || !ts.ExecutableAt.Equal(start.Add(72*time.Hour)) {
		t.Fatalf("created %s executable at %s, want pending at %s (1 day is raised to 72 hours)", ts.Status, ts.ExecutableAt, start.Add(72*time.Hour))
	}
	if _, err := f.e.ExecuteTombstone(f.t, ts.ID, engine.TombstoneExecution{}); !errors.Is(err, problem.ErrInvalid) {
		t.Fatalf("execute within the grace period: got %v, want a refusal", err)
	}
	c.advance(72 * time.Hour)
	done, err := f.e.ExecuteTombstone(f.t, ts.ID, engine.TombstoneExecution{})
	if err != nil {
		t.Fatal(err)
	}
	want := []tombstone.Affected{{Key: "user:" + alice, EventCount: 2, Action: "tombstoned"}, {Key: "message:" + m1, EventCount: 3, Action: "tombstoned"}}
	if done.Status != tombstone.StatusCompleted || done.ExecutedAt == nil || done.PreTombstoneRoot == "" || len(done.AffectedStreams) != len(want) {
		t.Fatalf("got %+v, want completed with executed_at, pre_tombstone_root and %v", done, want)
	}
	for i := range want {
		if done.AffectedStreams[i] != want[i] {
			t.Errorf("affected_streams[%d]: got %+v, want %+v", i, done.AffectedStreams[i], want[i])
		}
	}
	ev, err := f.e.Events(f.t, "user", alice, storage.StreamID{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"type":"_was_tombstoned"`, `"original_type":"was_created"`, `"tombstone_id":"` + ts.ID + `"`, `"tombstoned_at":"2026-03-11T14:30:00Z"`, `"original_hash":"`, `"chain_hash":"`} {
		if !strings.Contains(string(ev), w) {
			t.Errorf("events of the erased stream lack %s: %s", w, ev)
		}
	}
	canceled, err := f.e.Scheduled(f.t, engine.ScheduledQuery{Status: "canceled"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(canceled), `"aggregate_type":"notice"`) || !strings.Contains(string(canceled), `"data":null`) {
		t.Errorf("the notice alice's event scheduled: got %s, want it canceled with its data cleared", canceled)
	}
	f.close(t)
	cleared := `"trigger":{"aggregate_type":"user","id":"` + alice + `","type":"was_created","data":null}`
	if got := spaceCopies(t, f, cleared); len(got) != 2 {
		t.Errorf("sagas kept with their trigger cleared: got %v, want alice's two", got)
	}

	for name, tok := range map[string]string{"user:alice": s.alice, "message:m1": s.m1} {
		if got := findings(t, dir, tok); len(got) > 0 {
			t.Errorf("%s erased, but its payload remains in %v", name, got)
		}
	}
	for name, tok := range map[string]string{"message:m2 (target, preserve)": s.m2, "order:o1 (actor, preserve)": s.o1, "user:bob": s.bob} {
		if len(findings(t, dir, tok)) == 0 {
			t.Errorf("%s must be untouched, but its payload is gone", name)
		}
	}
}

// TestWritesAfterTombstone: the stream keeps its length, its chain verifies, reads fold the
// markers into no state, and new events append after them.
func TestWritesAfterTombstone(t *testing.T) {
	c := &clock{now: start}
	f := open(t, t.TempDir(), c)
	defer f.close(t)
	f.fixedStory(t)
	ts, err := f.e.CreateTombstone(f.t, "user", alice, tombstone.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.ExecuteTombstone(f.t, ts.ID, engine.TombstoneExecution{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := f.e.Tombstone(f.t, ts.ID); err != nil || !got.Forced {
		t.Fatalf("forced execution: got %+v, %v; want forced recorded", got, err)
	}
	f.write(t, "user", alice, "was_created", alice, "", `{"name":"again"}`)
	rep, err := f.e.VerifyChain(f.t, "user", alice)
	if err != nil || !rep.Valid || rep.Length != 2 {
		t.Fatalf("verify-chain after tombstone and write: got %+v, %v; want valid, length 2", rep, err)
	}
	agg, err := f.e.Aggregate(f.t, "user", alice, engine.ReadQuery{Synchronous: true})
	if err != nil || !strings.Contains(string(agg), `"again"`) || strings.Contains(string(agg), "ALICEfixed") {
		t.Fatalf("read after tombstone: got %s, %v; want the new state only", agg, err)
	}
}

// TestLifecycle checks the status rules: cancel only while pending, never execute a cancelled
// tombstone, execute a completed one again as a no-op.
func TestLifecycle(t *testing.T) {
	c := &clock{now: start}
	f := open(t, t.TempDir(), c)
	defer f.close(t)
	f.fixedStory(t)
	a, err := f.e.CreateTombstone(f.t, "user", alice, tombstone.Request{GracePeriodDays: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := start.Add(240 * time.Hour); !a.ExecutableAt.Equal(want) {
		t.Errorf("grace of 10 days: executable at %s, want %s", a.ExecutableAt, want)
	}
	if got, err := f.e.CancelTombstone(f.t, a.ID); err != nil || got.Status != tombstone.StatusCancelled {
		t.Fatalf("cancel pending: got %+v, %v", got, err)
	}
	if _, err := f.e.CancelTombstone(f.t, a.ID); !errors.Is(err, problem.ErrConflict) {
		t.Errorf("cancel cancelled: got %v, want a conflict", err)
	}
	if _, err := f.e.ExecuteTombstone(f.t, a.ID, engine.TombstoneExecution{Force: true}); !errors.Is(err, problem.ErrConflict) {
		t.Errorf("execute cancelled: got %v, want a conflict", err)
	}
	if _, err := f.e.CreateTombstone(f.t, "user", "e0000000-0000-4000-a000-000000000009", tombstone.Request{}); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("tombstone of an aggregate without events: got %v, want not found", err)
	}
	b, err := f.e.CreateTombstone(f.t, "user", bob, tombstone.Request{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.e.ExecuteTombstone(f.t, b.ID, engine.TombstoneExecution{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.e.ExecuteTombstone(f.t, b.ID, engine.TombstoneExecution{})
	if err != nil || again.ExecutedAt == nil || !again.ExecutedAt.Equal(*first.ExecutedAt) {
		t.Errorf("execute completed again: got %+v, %v; want the same completed record", again, err)
	}
	if _, err := f.e.CancelTombstone(f.t, b.ID); !errors.Is(err, problem.ErrConflict) {
		t.Errorf("cancel completed: got %v, want a conflict", err)
	}
	list, err := f.e.Tombstones(f.t)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: got %d, %v; want 2", len(list), err)
	}
	if _, err := f.e.Tombstone(f.t, "nope"); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("get unknown: got %v, want not found", err)
	}
}

// TestCheckpointStatesDropped: after erasure no checkpoint holds the erased state, so restoring
// one cannot write it back into a snapshot.
func TestCheckpointStatesDropped(t *testing.T) {
	c := &clock{now: start}
	f := open(t, t.TempDir(), c)
	defer f.close(t)
	f.fixedStory(t)
	single, err := f.e.CreateCheckpoint(f.t, "user", alice)
	if err != nil {
		t.Fatal(err)
	}
	root, err := f.e.CreateCheckpoint(f.t, "user", "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.e.CreateCheckpoint(f.t, "message", m2)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := f.e.CreateTombstone(f.t, "user", alice, tombstone.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.ExecuteTombstone(f.t, ts.ID, engine.TombstoneExecution{Force: true}); err != nil {
		t.Fatal(err)
	}
	cps, err := f.e.Checkpoints(f.t)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, cp := range cps {
		ids = append(ids, cp.ID)
	}
	if got, want := strings.Join(ids, ","), strings.Join([]string{root.ID, other.ID}, ","); len(ids) != 2 || !strings.Contains(got, root.ID) || !strings.Contains(got, other.ID) {
		t.Fatalf("checkpoints after erasure: got %s, want %s (the one of alice alone deleted, %s)", got, want, single.ID)
	}
	n, err := f.e.RestoreCheckpoint(f.t, root.ID)
	if err != nil || n != 1 {
		t.Fatalf("restore the root checkpoint: got %d, %v; want only bob's state restored", n, err)
	}
}

// TestTombstoneCancelsSchedules: the pending scheduled event that would write to the erased
// stream is canceled; the one for another stream stays pending.
func TestTombstoneCancelsSchedules(t *testing.T) {
	c := &clock{now: start}
	f := open(t, t.TempDir(), c)
	defer f.close(t)
	f.fixedStory(t)
	pending := func() string {
		b, err := f.e.Scheduled(f.t, engine.ScheduledQuery{Status: "pending"})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if p := pending(); !strings.Contains(p, alice) || !strings.Contains(p, bob) {
		t.Fatalf("before: pending %s, want reminders for alice and bob", p)
	}
	ts, err := f.e.CreateTombstone(f.t, "user", alice, tombstone.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.ExecuteTombstone(f.t, ts.ID, engine.TombstoneExecution{Force: true}); err != nil {
		t.Fatal(err)
	}
	if p := pending(); strings.Contains(p, alice) || !strings.Contains(p, bob) {
		t.Fatalf("after: pending %s, want only bob's reminder", p)
	}
	b, err := f.e.Scheduled(f.t, engine.ScheduledQuery{Status: "canceled"})
	if err != nil || !strings.Contains(string(b), alice) {
		t.Fatalf("canceled: got %s, %v; want alice's reminder", b, err)
	}
}

// TestCascadeAddedLater: writes carry the references their spec's onTombstone rules read, so
// under a first spec without any rule they carry none. Once a second version makes messages
// cascade on their actor, a tombstone of alice still reaches the message she sent before: the
// message streams are read, as the Tombstones page describes discovery. Under a spec whose rules
// held from the first version, writes keep exactly the references those rules read.
func TestCascadeAddedLater(t *testing.T) {
	c := &clock{now: start}
	dir := t.TempDir()
	f := openSpec(t, dir, c, "spec_without_cascade.json")
	f.fixedStory(t)
	f.close(t)
	if refs := refKeys(t, f); len(refs) != 0 {
		t.Fatalf("references under a spec without onTombstone: %q", refs)
	}
	f = openSpec(t, dir, c, "spec_without_cascade.json")
	defer f.close(t)
	doc, err := os.ReadFile(filepath.Join("testdata", "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.ctl.DeploySpec(f.t.Instance, f.t.Environment, "", func(*control.SpecVersion) ([]byte, error) { return doc, nil })
	if err != nil {
		t.Fatal(err)
	}
	sp, report := spec.Load(doc)
	if !report.OK() {
		t.Fatal(report.Err())
	}
	f.e.SpecDeployed(f.t, v.Version, sp)
	a, err := f.e.CreateTombstone(f.t, "user", alice, tombstone.Request{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.e.ExecuteTombstone(f.t, a.ID, engine.TombstoneExecution{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"user:" + alice, "message:" + m1}; !slices.Equal(got.Plan, want) {
		t.Errorf("plan %q, want %q", got.Plan, want)
	}

	g := open(t, t.TempDir(), c)
	g.fixedStory(t)
	g.close(t)
	want := []string{"actor\x00user\x00" + alice + "\x00message\x00", "actor\x00user\x00" + bob + "\x00message\x00"}
	refs := refKeys(t, g)
	if len(refs) != len(want) {
		t.Fatalf("references %q, want one for each message's actor", refs)
	}
	for i, w := range want {
		if !strings.HasPrefix(refs[i], w) {
			t.Errorf("reference %q, want one beginning %q", refs[i], w)
		}
	}
}
