package audit_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/audit"
	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/tombstone"
	"golang.org/x/crypto/bcrypt"
)

const testSpec = `{"singletons":["small","big","x","a","b","missing"],"agent_types":["user"],"aggregate_types":{"log":{"events":{"was_noted":{"schema":{"type":"object"},"handler":[]}}}}}`

const actor = "a0000000-0000-4000-a000-000000000001"

type fixedClock struct{ now time.Time }

func (c fixedClock) Now() time.Time { return c.now }

type fixture struct {
	e *engine.Engine
	t engine.Target
}

func newFixture(t *testing.T) *fixture {
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
	if _, err := ctl.DeploySpec(inst.ID, control.EnvStaging, "", func(*control.SpecVersion) ([]byte, error) { return []byte(testSpec), nil }); err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{DataDir: dir, Control: ctl, NoSync: true, Logger: slog.New(slog.DiscardHandler), Clock: fixedClock{time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return &fixture{e: e, t: engine.Target{Instance: inst.ID, Environment: control.EnvStaging}}
}

func (f *fixture) note(t *testing.T, id string, n int) {
	t.Helper()
	body := `{"data":{"n":` + strconv.Itoa(n) + `},"metadata":{"actor":{"type":"user","id":"` + actor + `"}}}`
	if _, err := f.e.Write(f.t, engine.WriteInput{AggregateType: "log", ID: id, EventType: "was_noted", Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
}

// tampered returns every proof that differs from p in one hex digit of its leaf, root or path,
// or in its index or tree size by one.
func tampered(p audit.Proof) []audit.Proof {
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == '0' {
			b[i] = '1'
		} else {
			b[i] = '0'
		}
		return string(b)
	}
	var out []audit.Proof
	for i := range p.Leaf {
		q := p
		q.Leaf = flip(p.Leaf, i)
		out = append(out, q)
	}
	for i := range p.Root {
		q := p
		q.Root = flip(p.Root, i)
		out = append(out, q)
	}
	for j := range p.Path {
		for i := range p.Path[j] {
			q := p
			q.Path = append([]string(nil), p.Path...)
			q.Path[j] = flip(p.Path[j], i)
			out = append(out, q)
		}
	}
	for _, d := range []int{-1, 1} {
		q := p
		q.Index += d
		out = append(out, q)
		q = p
		q.TreeSize += d
		out = append(out, q)
	}
	return out
}

// check asserts that the proof of every index in idx verifies against the stream, and, when
// tamper is set, that every one-digit change of it fails.
func (f *fixture) check(t *testing.T, id string, size int, idx []int, tamper bool) {
	t.Helper()
	root, err := f.e.MerkleRoot(f.t, "log", id)
	if err != nil || root.Length != uint64(size) {
		t.Fatalf("size=%d: merkle-root got %+v, %v", size, root, err)
	}
	for _, i := range idx {
		p, err := f.e.MerkleProof(f.t, "log", id, i)
		if err != nil {
			t.Fatalf("size=%d index=%d: %v", size, i, err)
		}
		if p.Root != root.Root || p.TreeSize != size || p.Index != i {
			t.Fatalf("size=%d index=%d: proof %+v disagrees with root %+v", size, i, p, root)
		}
		v, err := f.e.MerkleVerify(f.t, "log", id, p)
		if err != nil || !v.Valid {
			t.Fatalf("size=%d index=%d: got %+v, %v; want valid", size, i, v, err)
		}
		if !tamper {
			continue
		}
		for _, q := range tampered(p) {
			if v := audit.VerifyProof(q); v.Valid {
				// A changed tree size can still be a valid proof of another tree; it must not
				// match this stream's root over that many events.
				if w, err := f.e.MerkleVerify(f.t, "log", id, q); err != nil || w.Valid {
					t.Fatalf("size=%d index=%d: tampered proof %+v verifies (%+v, %v)", size, i, q, w, err)
				}
			} else if v.Reason == "" {
				t.Fatalf("size=%d index=%d: invalid proof without a reason", size, i)
			}
		}
	}
}

// TestProofsThroughEngine: every index of streams of sizes 1..64 verifies, and every one-digit
// change of those proofs fails (for sizes 1..17, 32, 33 and 64); in a stream of 1,000 events
// every index verifies, and one-digit changes fail at boundary and sampled indexes. Sizes 65..999
// are left to the merkle package's own sweep: through the engine they would take minutes under
// -race.
func TestProofsThroughEngine(t *testing.T) {
	f := newFixture(t)
	for size := 1; size <= 64; size++ {
		f.note(t, "small", size)
		idx := make([]int, size)
		for i := range idx {
			idx[i] = i
		}
		f.check(t, "small", size, idx, size <= 17 || size == 32 || size == 33 || size == 64)
	}
	for n := 1; n <= 1000; n++ {
		f.note(t, "big", n)
	}
	idx := []int{0, 1, 2, 255, 256, 511, 512, 513, 767, 768, 991, 992, 998, 999}
	for i := 3; i < 1000; i += 37 {
		idx = append(idx, i)
	}
	f.check(t, "big", 1000, idx, true)
	all := make([]int, 1000)
	for i := range all {
		all[i] = i
	}
	f.check(t, "big", 1000, all, false)
	if _, err := f.e.MerkleProof(f.t, "log", "big", 1000); err == nil {
		t.Error("proof of index 1000 in a stream of 1000: got none, want a refusal")
	}
}

func TestVerifyChainReport(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 5; i++ {
		f.note(t, "x", i)
	}
	rep, err := f.e.VerifyChain(f.t, "log", "x")
	if err != nil || !rep.Valid || rep.Length != 5 || rep.FirstBadIndex != nil {
		t.Fatalf("got %+v, %v; want valid, length 5, no first_bad_index", rep, err)
	}
	if _, err := f.e.VerifyChain(f.t, "log", "missing"); err == nil {
		t.Error("verify-chain of a stream without events: got no error, want not found")
	}
}

func TestVerifyProofReasons(t *testing.T) {
	good := audit.Proof{Index: 0, Leaf: strings.Repeat("a", 64), Root: strings.Repeat("b", 64), TreeSize: 1, Path: []string{}}
	cases := []struct {
		name   string
		mutate func(*audit.Proof)
		reason string
	}{
		{"leaf not hex", func(p *audit.Proof) { p.Leaf = "zz" }, "leaf is not"},
		{"uppercase root", func(p *audit.Proof) { p.Root = strings.Repeat("B", 64) }, "root is not"},
		{"empty tree", func(p *audit.Proof) { p.TreeSize = 0 }, "tree_size"},
		{"index outside", func(p *audit.Proof) { p.Index = 1 }, "outside a tree"},
		{"path too long", func(p *audit.Proof) { p.Path = []string{strings.Repeat("c", 64)} }, "path has 1 hashes"},
		{"wrong root", func(p *audit.Proof) {}, "do not lead to the root"},
	}
	for _, c := range cases {
		p := good
		c.mutate(&p)
		v := audit.VerifyProof(p)
		if v.Valid || !strings.Contains(v.Reason, c.reason) {
			t.Errorf("%s: got %+v, want invalid with reason containing %q", c.name, v, c.reason)
		}
	}
}

// TestAnchorNamesTombstonedStreams: an anchor verifies against an unchanged log, and after a
// tombstone it still verifies (the markers keep the old leaves) while naming the erased stream.
func TestAnchorNamesTombstonedStreams(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 3; i++ {
		f.note(t, "a", i)
		f.note(t, "b", i)
	}
	a, err := f.e.CreateAnchor(f.t)
	if err != nil || a.StreamCount != 2 {
		t.Fatalf("create: got %+v, %v; want 2 streams", a, err)
	}
	chk, err := f.e.VerifyAnchor(f.t, a.ID)
	if err != nil || !chk.Valid || len(chk.Changed) != 0 {
		t.Fatalf("fresh anchor: got %+v, %v; want valid and unchanged", chk, err)
	}
	f.note(t, "a", 99)
	if chk, _ = f.e.VerifyAnchor(f.t, a.ID); !chk.Valid || len(chk.Changed) != 0 {
		t.Fatalf("after an append: got %+v; appends are not changes", chk)
	}
	ts, err := f.e.CreateTombstone(f.t, "log", "b", tombstone.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.ExecuteTombstone(f.t, ts.ID, engine.TombstoneExecution{Force: true}); err != nil {
		t.Fatal(err)
	}
	chk, err = f.e.VerifyAnchor(f.t, a.ID)
	want := fmt.Sprint([]audit.StreamChange{{Key: "log:b", Reason: audit.ChangeTombstoned, TombstoneIDs: []string{ts.ID}}})
	if err != nil || !chk.Valid || fmt.Sprint(chk.Changed) != want {
		t.Fatalf("after a tombstone: got %+v, %v; want valid with changed %s", chk, err, want)
	}
	latest, err := f.e.LatestAnchor(f.t)
	if err != nil || latest.ID == a.ID || len(latest.Streams) != 2 {
		t.Fatalf("latest: got %+v, %v; want the pre-tombstone anchor of the execution", latest, err)
	}
	list, err := f.e.Anchors(f.t)
	if err != nil || len(list) != 2 || list[0].Streams != nil {
		t.Fatalf("list: got %+v, %v; want two anchors without streams", list, err)
	}
	if err := f.e.DeleteAnchor(f.t, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.VerifyAnchor(f.t, a.ID); err == nil {
		t.Error("verify a deleted anchor: got no error")
	}
}

func TestAutoAnchorSettings(t *testing.T) {
	f := newFixture(t)
	f.note(t, "a", 1)
	s, err := f.e.AnchorSettings(f.t)
	if err != nil || s != audit.DefaultSettings {
		t.Fatalf("defaults: got %+v, %v", s, err)
	}
	if _, created, err := f.e.AnchorIfDue(f.t); err != nil || created {
		t.Fatalf("disabled: got created=%v, %v", created, err)
	}
	if err := f.e.SetAnchorSettings(f.t, audit.Settings{Enabled: true, IntervalSeconds: 1}); err == nil {
		t.Error("interval of 1 s: got no error")
	}
	if err := f.e.SetAnchorSettings(f.t, audit.Settings{Enabled: true, IntervalSeconds: 3600}); err != nil {
		t.Fatal(err)
	}
	if _, created, err := f.e.AnchorIfDue(f.t); err != nil || !created {
		t.Fatalf("enabled without anchors: got created=%v, %v; want an anchor", created, err)
	}
	if _, created, err := f.e.AnchorIfDue(f.t); err != nil || created {
		t.Fatalf("right after an anchor: got created=%v, %v; want none", created, err)
	}
	latest := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s = audit.Settings{Enabled: true, IntervalSeconds: 3600}
	for _, c := range []struct {
		now  time.Time
		want bool
	}{{latest.Add(59 * time.Minute), false}, {latest.Add(time.Hour), true}} {
		if got := s.Due(latest, c.now); got != c.want {
			t.Errorf("due at %s: got %v, want %v", c.now, got, c.want)
		}
	}
}

// TestRunAutoAnchors: the server's loop anchors an open target whose settings make one due.
func TestRunAutoAnchors(t *testing.T) {
	f := newFixture(t)
	f.note(t, "a", 1)
	if err := f.e.SetAnchorSettings(f.t, audit.Settings{Enabled: true, IntervalSeconds: 3600}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.e.RunAutoAnchors(ctx, 5*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if as, err := f.e.Anchors(f.t); err == nil && len(as) > 0 {
			if len(as) != 1 || !as[0].Auto {
				t.Fatalf("got %+v, want one automatic anchor (the next is due in an hour)", as)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no automatic anchor within 5 s")
}
