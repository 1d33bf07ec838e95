package tombstone_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/j17-go/j17/engine"
	"github.com/j17-go/j17/engine/control"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/engine/tombstone"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/wal"
	"github.com/klauspost/compress/s2"
	"golang.org/x/crypto/bcrypt"
)

const (
	alice = "a0000000-0000-4000-a000-000000000001"
	bob   = "b0000000-0000-4000-a000-000000000002"
	m1    = "c0000000-0000-4000-a000-000000000003" // sent by alice: cascades
	m2    = "c0000000-0000-4000-a000-000000000004" // sent by bob to alice: preserved
	o1    = "d0000000-0000-4000-a000-000000000005" // placed by alice: preserved
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fixture is an engine over dir with the test spec deployed on instance "app", staging.
type fixture struct {
	dir   string
	clock *clock
	ctl   *control.Store
	e     *engine.Engine
	t     engine.Target
}

var start = time.Date(2026, 3, 8, 14, 30, 0, 0, time.UTC)

// open opens (and on first use sets up) a fixture over dir with testdata/spec.json.
func open(t *testing.T, dir string, c *clock) *fixture {
	t.Helper()
	return openSpec(t, dir, c, "spec.json")
}

// openSpec opens (and on first use sets up, deploying testdata/<specFile>) a fixture over dir.
func openSpec(t *testing.T, dir string, c *clock, specFile string) *fixture {
	t.Helper()
	ctl, err := control.Open(filepath.Join(dir, "control.db"), control.Options{BcryptCost: bcrypt.MinCost, Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: dir, clock: c, ctl: ctl}
	inst, err := ctl.Instance("app")
	if err != nil {
		if inst, err = ctl.CreateInstance("app"); err != nil {
			t.Fatal(err)
		}
		doc, err := os.ReadFile(filepath.Join("testdata", specFile))
		if err != nil {
			t.Fatal(err)
		}
		if _, report := spec.Load(doc); !report.OK() {
			t.Fatal(report.Err())
		}
		if _, err := ctl.DeploySpec(inst.ID, control.EnvStaging, "", func(*control.SpecVersion) ([]byte, error) { return doc, nil }); err != nil {
			t.Fatal(err)
		}
	}
	f.t = engine.Target{Instance: inst.ID, Environment: control.EnvStaging}
	if f.e, err = engine.New(engine.Options{DataDir: dir, Control: ctl, Clock: c, NoSync: true, SnapshotEvery: 1, SchedulerPoll: -1, Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) close(t *testing.T) {
	t.Helper()
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.ctl.Close(); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) storeDir() string { return filepath.Join(f.dir, f.t.Instance, f.t.Environment) }

func (f *fixture) write(t *testing.T, typ, id, event, actor, target, data string) {
	t.Helper()
	meta := `{"actor":{"type":"user","id":"` + actor + `"}`
	if target != "" {
		meta += `,"target":{"type":"user","id":"` + target + `"}`
	}
	body := `{"data":` + data + `,"metadata":` + meta + `}}`
	if _, err := f.e.Write(f.t, engine.WriteInput{AggregateType: typ, ID: id, EventType: event, Body: []byte(body)}); err != nil {
		t.Fatalf("write %s:%s: %v", typ, id, err)
	}
}

// pii returns a unique token and event data over 512 bytes that repeats it, so that the log
// compresses the record.
func pii(prefix string) (string, string) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	tok := prefix + hex.EncodeToString(b[:])
	return tok, `{"name":"` + tok + `","bio":"` + strings.Repeat(tok+" ", 40) + `"}`
}

// story writes the streams of the Tombstones page's example and returns the tokens of each.
type story struct{ alice, m1, m2, o1, bob string }

func (f *fixture) story(t *testing.T) story {
	t.Helper()
	var s story
	var d string
	s.alice, d = pii("ALICE")
	f.write(t, "user", alice, "was_created", alice, "", d)
	f.write(t, "user", alice, "was_created", alice, "", `{"name":"`+s.alice+`"}`)
	s.bob, d = pii("BOB")
	f.write(t, "user", bob, "was_created", bob, "", d)
	s.m1, d = pii("MONE")
	f.write(t, "message", m1, "was_sent", alice, bob, d)
	f.write(t, "message", m1, "was_sent", alice, bob, d)
	f.write(t, "message", m1, "was_sent", alice, "", `{"short":"`+s.m1+`"}`)
	s.m2, d = pii("MTWO")
	f.write(t, "message", m2, "was_sent", bob, alice, d)
	s.o1, d = pii("ORDER")
	f.write(t, "order", o1, "was_placed", alice, "", d)
	return s
}

// fixedStory writes the same streams with fixed tokens, for runs whose results are compared.
func (f *fixture) fixedStory(t *testing.T) {
	t.Helper()
	big := func(tok string) string { return `{"name":"` + tok + `","bio":"` + strings.Repeat(tok+" ", 40) + `"}` }
	f.write(t, "user", alice, "was_created", alice, "", big("ALICEfixed"))
	f.write(t, "user", bob, "was_created", bob, "", big("BOBfixed"))
	f.write(t, "message", m1, "was_sent", alice, bob, big("MONEfixed"))
	f.write(t, "message", m1, "was_sent", alice, "", `{"n":2}`)
	f.write(t, "message", m2, "was_sent", bob, alice, big("MTWOfixed"))
	f.write(t, "order", o1, "was_placed", alice, "", big("ORDERfixed"))
}

// findings names where tok remains in dir: in the bytes of any file, in an S2 or Snappy encoding
// of it, or inside any log record once decompressed. The engine must be closed.
func findings(t *testing.T, dir, tok string) []string {
	t.Helper()
	needles := [][]byte{[]byte(tok), s2.Encode(nil, []byte(tok)), s2.EncodeBetter(nil, []byte(tok)), s2.EncodeBest(nil, []byte(tok)), s2.EncodeSnappy(nil, []byte(tok))}
	var out []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, n := range needles {
			if bytes.Contains(b, n) {
				out = append(out, path+" (form "+[]string{"plain", "s2", "s2-better", "s2-best", "snappy"}[i]+")")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*", "*", "log"))
	for _, l := range logs {
		w, err := wal.Open(l, wal.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Scan(wal.Pos{}, func(pos wal.Pos, _ uint8, payload []byte) error {
			if bytes.Contains(payload, []byte(tok)) {
				out = append(out, l+" record at "+pos.String()+" (decompressed)")
			}
			return nil
		})
		_ = w.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// spaceCopies names the record-space values ("space/key") of the checkpoint, schedule and saga
// spaces that hold tok. The engine must be closed.
func spaceCopies(t *testing.T, f *fixture, tok string) []string {
	t.Helper()
	st, err := storage.Open(f.storeDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []string
	for _, space := range []string{"checkpoints", "scheduled", "saga"} {
		err := st.Scan(space, "", func(key string, value []byte) error {
			if bytes.Contains(value, []byte(tok)) {
				out = append(out, space+"/"+key)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// refKeys returns the keys of the actor and target index, in key order. The engine must be
// closed.
func refKeys(t *testing.T, f *fixture) []string {
	t.Helper()
	st, err := storage.Open(f.storeDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var keys []string
	if err := st.Scan(tombstone.RefSpace, "", func(key string, _ []byte) error {
		keys = append(keys, key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// compressed reports whether the log holds tok only in compressed records: some decompressed
// record repeats it, while no log file holds it twice in a row.
func compressed(t *testing.T, dir, tok string) bool {
	t.Helper()
	twice := []byte(tok + " " + tok)
	plain := false
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && filepath.Base(filepath.Dir(path)) == "log" {
			if b, _ := os.ReadFile(path); bytes.Contains(b, twice) {
				plain = true
			}
		}
		return nil
	})
	return !plain && len(findings(t, dir, tok)) > 0
}

// chainValues matches the chain values of an export, which depend on the (random) tombstone id.
var chainValues = regexp.MustCompile(`"hash":"[0-9a-f]{64}"`)

// export returns the store's export with the tombstone id and the chain values replaced, to
// compare runs; the caller verifies the chains. The engine must be closed.
func export(t *testing.T, f *fixture, id string) string {
	t.Helper()
	st, err := storage.Open(f.storeDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	if _, err := st.Export(&buf); err != nil {
		t.Fatal(err)
	}
	return chainValues.ReplaceAllString(strings.ReplaceAll(buf.String(), id, "TOMBSTONE"), `"hash":"..."`)
}

func status(t *testing.T, f *fixture, id string) tombstone.Tombstone {
	t.Helper()
	ts, err := f.e.Tombstone(f.t, id)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
