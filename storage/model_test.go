package storage

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var modelSeed = flag.Uint64("model.seed", 0, "seed for TestRandomAgainstModel (0 = time-based)")

type modelEvent struct{ typ, data string }

// TestRandomAgainstModel runs random commits, conflicts, record-space changes, rewrites (and so
// compactions), reopens and index deletions against a plain in-memory model, over a matrix of
// sync policy x segment size x compression.
func TestRandomAgainstModel(t *testing.T) {
	seed := *modelSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	for _, noSync := range []bool{true, false} {
		for _, segSize := range []int64{8 << 10, 1 << 20} {
			for _, compress := range []int{-1, 128} {
				t.Run(fmt.Sprintf("nosync=%v/segment=%d/compress=%d", noSync, segSize, compress), func(t *testing.T) {
					opts := testOptions()
					opts.NoSync, opts.SegmentSize, opts.CompressThreshold = noSync, segSize, compress
					runModel(t, seed, opts)
				})
			}
		}
	}
}

func runModel(t *testing.T, seed uint64, opts Options) {
	rng := rand.New(rand.NewPCG(seed, 1))
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d (rerun with -model.seed=%d): %s", seed, seed, fmt.Sprintf(format, args...))
	}
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	streams := []StreamKey{key("a", "1"), key("a", "2"), key("b", "1"), key("c", "x")}
	model := map[StreamKey][]modelEvent{}
	space := map[string]string{}
	spaceKeys := []string{"k0", "k1", "k2", "k3", "k4"}
	n := 0
	compare := func(op string) {
		t.Helper()
		for _, k := range streams {
			got := allEvents(t, s, k)
			want := model[k]
			if len(got) != len(want) {
				fail("after %s: %s has %d events, model %d", op, k, len(got), len(want))
			}
			for i := range got {
				if got[i].Type != want[i].typ || string(got[i].Data) != want[i].data {
					fail("after %s: %s event %d is %s %s, model %s %s", op, k, i+1, got[i].Type, got[i].Data, want[i].typ, want[i].data)
				}
			}
		}
		for _, sk := range spaceKeys {
			v, err := s.Get("m", sk)
			want, ok := space[sk]
			if ok != (err == nil) || string(v) != want {
				fail("after %s: space %s is %q (%v), model %q (%v)", op, sk, v, err, want, ok)
			}
		}
	}
	for step := 0; step < 250; step++ {
		switch r := rng.IntN(100); {
		case r < 70:
			rec := &Record{}
			next := map[StreamKey][]modelEvent{}
			lengthOf := func(k StreamKey) int {
				if e, ok := next[k]; ok {
					return len(e)
				}
				return len(model[k])
			}
			conflict := false
			for a := 0; a < 1+rng.IntN(2); a++ {
				k := streams[rng.IntN(len(streams))]
				var ex Expect
				switch rng.IntN(4) {
				case 0:
					ex = Expect{Kind: Skip}
				case 1:
					ex = Expect{Kind: Exactly, Length: uint64(lengthOf(k) + 1)}
					conflict = true
				default:
					ex = Expect{Kind: Exactly, Length: uint64(lengthOf(k))}
				}
				evs := append([]modelEvent(nil), model[k]...)
				if e, ok := next[k]; ok {
					evs = e
				}
				var nes []NewEvent
				for e := 0; e < 1+rng.IntN(3); e++ {
					n++
					data := fmt.Sprintf(`{"n":%d,"pad":"%s"}`, n, strings.Repeat("x", rng.IntN(300)))
					nes = append(nes, NewEvent{Type: "e", Data: json.RawMessage(data)})
					evs = append(evs, modelEvent{"e", data})
				}
				next[k] = evs
				rec.Appends = append(rec.Appends, Append{Stream: k, Expect: ex, Events: nes})
			}
			nextSpace := map[string]*string{}
			for p := 0; p < rng.IntN(3); p++ {
				sk := spaceKeys[rng.IntN(len(spaceKeys))]
				if rng.IntN(3) == 0 {
					rec.Deletes = append(rec.Deletes, Delete{Space: "m", Key: sk})
					nextSpace[sk] = nil
				} else {
					v := fmt.Sprint(rng.IntN(1000))
					rec.Puts = append(rec.Puts, Put{Space: "m", Key: sk, Value: []byte(v)})
					nextSpace[sk] = &v
				}
			}
			_, err := s.Commit(rec)
			if conflict != errors.Is(err, ErrConflict) {
				fail("step %d: commit error %v, want conflict=%v", step, err, conflict)
			}
			if err != nil && !conflict {
				fail("step %d: %v", step, err)
			}
			if conflict {
				continue
			}
			for k, e := range next {
				model[k] = e
			}
			// Puts apply before deletes within one record.
			for _, p := range rec.Puts {
				space[p.Key] = string(p.Value)
			}
			for _, d := range rec.Deletes {
				delete(space, d.Key)
			}
		case r < 82:
			k := streams[rng.IntN(len(streams))]
			if len(model[k]) == 0 {
				continue
			}
			n++
			tag := n
			if _, err := s.Rewrite(k, func(old Event) (NewEvent, error) {
				return NewEvent{Type: "_was_tombstoned", Data: json.RawMessage(fmt.Sprintf(`{"t":%d,"i":%d}`, tag, old.Index))}, nil
			}); err != nil {
				fail("step %d: rewrite %s: %v", step, k, err)
			}
			for i := range model[k] {
				model[k][i] = modelEvent{"_was_tombstoned", fmt.Sprintf(`{"i":%d,"t":%d}`, i+1, tag)}
			}
		case r < 91:
			if err := s.Close(); err != nil {
				fail("step %d: close: %v", step, err)
			}
			if s, err = Open(dir, opts); err != nil {
				fail("step %d: reopen: %v", step, err)
			}
		default:
			if err := s.Close(); err != nil {
				fail("step %d: close: %v", step, err)
			}
			if err := Check(dir, opts); err != nil {
				fail("step %d: check: %v", step, err)
			}
			os.Remove(filepath.Join(dir, "index.db"))
			if s, err = Open(dir, opts); err != nil {
				fail("step %d: reopen without index: %v", step, err)
			}
		}
		compare(fmt.Sprintf("step %d", step))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, opts); err != nil {
		fail("final check: %v", err)
	}
}
