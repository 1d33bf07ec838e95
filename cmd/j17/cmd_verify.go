package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/j17-go/j17/engine/audit"
	"github.com/j17-go/j17/engine/tombstone"
	"github.com/j17-go/j17/merkle"
	"github.com/j17-go/j17/storage"
)

// cmdVerify runs `j17 verify [--anchor FILE|JSON] PATH`. PATH is a data directory (every store
// under PATH/<instance>/<env>/), one store directory, or an NDJSON export (storage.Export's
// format). It recomputes every stream's hash chain from the events, checks each store's index
// against its log, and, given a root anchor, checks every anchored stream's Merkle root and the
// anchor's root. Each problem is printed; the exit status is 0 when everything verifies and 1
// otherwise. Stores are opened, so the server must not be running.
func cmdVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	anchorArg := fs.String("anchor", "", "root anchor to check: a JSON `file`, or the JSON itself")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: j17 verify [--anchor FILE|JSON] PATH")
		fmt.Fprintln(stderr, "PATH is a data directory, a store directory or an NDJSON export. Stop the server first.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	var anchor *audit.Anchor
	if *anchorArg != "" {
		a, err := readAnchor(*anchorArg)
		if err != nil {
			fmt.Fprintf(stderr, "j17 verify: --anchor: %v\n", err)
			return 2
		}
		anchor = &a
	}
	v := &verifier{out: stdout}
	sources, err := v.run(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "j17 verify: %v\n", err)
		return 1
	}
	if anchor != nil {
		if len(sources) != 1 {
			v.problem("%s: --anchor needs exactly one store or export, found %d", fs.Arg(0), len(sources))
		} else {
			v.checkAnchor(sources[0], *anchor)
		}
	}
	if v.problems > 0 {
		fmt.Fprintf(stdout, "verify: %d problem(s)\n", v.problems)
		return 1
	}
	fmt.Fprintln(stdout, "verify: ok")
	return 0
}

func readAnchor(arg string) (audit.Anchor, error) {
	raw := []byte(arg)
	if !strings.HasPrefix(strings.TrimSpace(arg), "{") {
		b, err := os.ReadFile(arg)
		if err != nil {
			return audit.Anchor{}, err
		}
		raw = b
	}
	var a audit.Anchor
	if err := json.Unmarshal(raw, &a); err != nil {
		return audit.Anchor{}, fmt.Errorf("not an anchor: %w", err)
	}
	if a.Root == "" || a.Streams == nil {
		return audit.Anchor{}, errors.New("the anchor has no root or no streams (use the answer of GET .../root-anchors/:id)")
	}
	return a, nil
}

type verifier struct {
	out      io.Writer
	problems int
}

func (v *verifier) problem(format string, args ...any) {
	v.problems++
	fmt.Fprintf(v.out, "PROBLEM: "+format+"\n", args...)
}

// source is what was verified of one store or export.
type source struct {
	name    string
	streams exportStreams
}

// run verifies path and returns its sources.
func (v *verifier) run(path string) ([]source, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return []source{{name: path, streams: v.export(path, f)}}, nil
	}
	var stores []string
	if fi, err := os.Stat(filepath.Join(path, "log")); err == nil && fi.IsDir() {
		stores = []string{path}
	} else {
		logs, err := logDirs(path)
		if err != nil {
			return nil, err
		}
		for _, l := range logs {
			stores = append(stores, filepath.Dir(l))
		}
	}
	if len(stores) == 0 {
		return nil, fmt.Errorf("%s holds no store and is not an export", path)
	}
	var out []source
	for _, dir := range stores {
		if s, ok := v.store(dir); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// store checks a store's log and index, then verifies its export.
func (v *verifier) store(dir string) (source, bool) {
	if err := storage.Check(dir, storage.Options{NoSync: true}); errors.Is(err, storage.ErrIndexMismatch) {
		v.problem("%s: %v (the index is derived from the log: remove %s and start the server to rebuild it)", dir, err, filepath.Join(dir, "index.db"))
	} else if err != nil {
		v.problem("%s: %v", dir, err)
	}
	st, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		v.problem("%s: open: %v", dir, err)
		return source{}, false
	}
	defer st.Close()
	pr, pw := io.Pipe()
	go func() {
		_, err := st.Export(pw)
		pw.CloseWithError(err)
	}()
	streams := v.export(dir, pr)
	_ = pr.Close()
	return source{name: dir, streams: streams}, true
}

// exportStreams holds, per stream, what anchor checks read: each event's type, chain value, and
// the data of tombstone markers.
type exportStreams map[storage.StreamKey][]storage.Event

func (s exportStreams) Length(k storage.StreamKey) (uint64, error) { return uint64(len(s[k])), nil }

func (s exportStreams) Range(k storage.StreamKey, from, to uint64, fn func(storage.Event) error) error {
	evs := s[k]
	for i := from; i <= to && i <= uint64(len(evs)); i++ {
		if err := fn(evs[i-1]); err != nil {
			return err
		}
	}
	return nil
}

// export verifies an NDJSON export: every stream's indexes run 1, 2, 3, ... and every line's hash
// is the chain value recomputed from the events.
func (v *verifier) export(name string, r io.Reader) exportStreams {
	streams := exportStreams{}
	chains := map[storage.StreamKey]merkle.Hash{}
	broken := map[storage.StreamKey]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	line, events := 0, 0
	for sc.Scan() {
		line++
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var l storage.ExportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			v.problem("%s: line %d: not an export line: %v", name, line, err)
			continue
		}
		k := storage.StreamKey{Type: l.AggregateType, ID: l.AggregateID}
		if broken[k] {
			continue
		}
		events++
		if want := uint64(len(streams[k])) + 1; l.Index != want {
			v.problem("%s: line %d: stream %s: event index %d, expected %d", name, line, k, l.Index, want)
			broken[k] = true
			continue
		}
		got, err := hex.DecodeString(l.Hash)
		if err != nil || len(got) != 32 {
			v.problem("%s: line %d: stream %s event %d: hash %q is not a hex SHA-256", name, line, k, l.Index, l.Hash)
			broken[k] = true
			continue
		}
		h := merkle.ChainNext(chains[k], storage.ContentHash(k, l.Type, compactJSON(l.Data), compactJSON(l.Metadata)))
		if string(got) != string(h[:]) {
			v.problem("%s: line %d: stream %s: hash chain breaks at event %d (index %d, 0-based)", name, line, k, l.Index, l.Index-1)
			broken[k] = true
			continue
		}
		chains[k] = h
		ev := storage.Event{Stream: k, Index: l.Index, Type: l.Type, Hash: h}
		if l.Type == tombstone.MarkerType {
			ev.Data = l.Data
		}
		streams[k] = append(streams[k], ev)
	}
	if err := sc.Err(); err != nil {
		v.problem("%s: read: %v", name, err)
	}
	fmt.Fprintf(v.out, "%s: %d streams, %d events read\n", name, len(streams), events)
	return streams
}

// compactJSON returns a JSON value as the export wrote it; null stands for an absent value.
func compactJSON(b json.RawMessage) []byte {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

// checkAnchor checks an anchor against one verified source.
func (v *verifier) checkAnchor(s source, a audit.Anchor) {
	root, err := audit.RootOf(a.Streams)
	if err != nil || root != a.Root {
		v.problem("anchor %s: its root %s is not the root over its own streams", a.ID, a.Root)
		return
	}
	chk, err := audit.VerifyAnchor(s.streams, a)
	if err != nil {
		v.problem("anchor %s: %v", a.ID, err)
		return
	}
	for _, c := range chk.Changed {
		if c.Reason == audit.ChangeTombstoned {
			fmt.Fprintf(v.out, "anchor %s: %s was tombstoned (%s); its anchored root still verifies\n", a.ID, c.Key, strings.Join(c.TombstoneIDs, ", "))
			continue
		}
		v.problem("anchor %s: stream %s: %s", a.ID, c.Key, c.Reason)
	}
	if !chk.Valid && len(chk.Changed) == 0 {
		v.problem("anchor %s: the streams do not reproduce the anchored root", a.ID)
	}
	if chk.Valid {
		fmt.Fprintf(v.out, "anchor %s: root %s verifies over %d streams\n", a.ID, a.Root, chk.StreamsChecked)
	}
}
