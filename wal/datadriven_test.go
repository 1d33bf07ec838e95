package wal

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata files")

// ddCase is one directive of a testdata file: a command line, its input and the expected output.
type ddCase struct {
	line   int
	cmd    string
	args   map[string]string
	input  []string
	expect string
}

// parseDD reads a testdata file: each case is a directive line with key=value arguments, input
// lines, a line "----", and the expected output up to a blank line. Lines starting with # between
// cases are comments.
func parseDD(t *testing.T, path string) []ddCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []ddCase
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		c := ddCase{line: n, cmd: fields[0], args: map[string]string{}}
		for _, a := range fields[1:] {
			k, v, _ := strings.Cut(a, "=")
			c.args[k] = v
		}
		for sc.Scan() {
			n++
			if sc.Text() == "----" {
				break
			}
			c.input = append(c.input, sc.Text())
		}
		var out []string
		for sc.Scan() {
			n++
			if sc.Text() == "" {
				break
			}
			out = append(out, sc.Text())
		}
		c.expect = strings.Join(out, "\n")
		cases = append(cases, c)
	}
	return cases
}

func writeDD(t *testing.T, path string, cases []ddCase, got []string) {
	var b strings.Builder
	old, _ := os.ReadFile(path)
	// Keep the comments that precede each case.
	lines := strings.Split(string(old), "\n")
	for i, c := range cases {
		for j := c.line - 2; j >= 0 && strings.HasPrefix(lines[j], "#"); j-- {
			if j == 0 || !strings.HasPrefix(lines[j-1], "#") {
				for k := j; k <= c.line-2; k++ {
					b.WriteString(lines[k] + "\n")
				}
				break
			}
		}
		b.WriteString(lines[c.line-1] + "\n")
		for _, in := range c.input {
			b.WriteString(in + "\n")
		}
		b.WriteString("----\n" + got[i] + "\n\n")
	}
	if err := os.WriteFile(path, []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDataDriven runs the scripts in testdata: appends, waits, crashes with unsynced bytes
// dropped, recovery, damage to the files, rotation and compaction.
func TestDataDriven(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			cases := parseDD(t, path)
			r := &ddRunner{t: t, fs: newCrashFS()}
			defer r.closeLog()
			got := make([]string, len(cases))
			for i, c := range cases {
				got[i] = strings.TrimRight(r.run(c), "\n")
				if !*rewrite && got[i] != c.expect {
					t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, c.line, c.cmd, got[i], c.expect)
				}
			}
			if *rewrite {
				writeDD(t, path, cases, got)
			}
		})
	}
}

const ddDir = "log"

type ddRunner struct {
	t       *testing.T
	fs      *crashFS
	opts    Options
	l       *Log
	pending []*Pending
}

func (r *ddRunner) closeLog() {
	if r.l != nil {
		r.l.Close()
		r.l = nil
	}
}

// ddPayload turns an input line into a payload: "@N" is N bytes that do not compress, anything
// else is the line itself.
func ddPayload(line string) []byte {
	if n, err := strconv.Atoi(strings.TrimPrefix(line, "@")); err == nil && strings.HasPrefix(line, "@") {
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return b
	}
	return []byte(line)
}

func ddShow(p []byte) string {
	if len(p) > 40 {
		return fmt.Sprintf("<%d bytes %s...>", len(p), p[:8])
	}
	return string(p)
}

func parsePos(s string) Pos {
	a, b, _ := strings.Cut(s, ":")
	seg, _ := strconv.ParseUint(a, 10, 32)
	off, _ := strconv.ParseUint(b, 10, 32)
	return Pos{Seg: uint32(seg), Off: uint32(off)}
}

func (r *ddRunner) intArg(c ddCase, k string, def int) int {
	v, ok := c.args[k]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.t.Fatalf("line %d: %s=%q: %v", c.line, k, v, err)
	}
	return n
}

func (r *ddRunner) files() string {
	names, _ := r.fs.List(ddDir)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s %d\n", n, len(r.fs.file(filepath.Join(ddDir, n)).data))
	}
	return b.String()
}

func (r *ddRunner) run(c ddCase) string {
	var b strings.Builder
	switch c.cmd {
	case "open", "recover":
		r.closeLog()
		if c.cmd == "open" {
			r.opts = Options{
				SegmentSize:       int64(r.intArg(c, "segment", 0)),
				CompressThreshold: r.intArg(c, "compress", -1),
			}
		}
		r.opts.FS = r.fs
		l, err := Open(ddDir, r.opts)
		if err != nil {
			return "error: " + err.Error()
		}
		r.l = l
		return "end=" + l.End().String()
	case "append", "write":
		kind := uint8(r.intArg(c, "kind", 0))
		for _, line := range c.input {
			if c.cmd == "append" {
				p, err := r.l.Append(kind, ddPayload(line))
				if err != nil {
					fmt.Fprintf(&b, "error: %v\n", err)
					continue
				}
				fmt.Fprintf(&b, "%v\n", p)
				continue
			}
			p := r.l.Write(kind, ddPayload(line))
			r.pending = append(r.pending, p)
			fmt.Fprintf(&b, "%v\n", p.Pos())
		}
	case "sync":
		for _, p := range r.pending {
			if err := p.Wait(); err != nil {
				fmt.Fprintf(&b, "%v: %v\n", p.Pos(), err)
			}
		}
		r.pending = nil
		b.WriteString("ok")
	case "stall":
		r.fs.stallSyncs()
		b.WriteString("ok")
	case "crash":
		if len(r.pending) > 0 {
			r.fs.waitStalled()
		}
		crashed := r.fs.crash(r.intArg(c, "torn", 0))
		r.fs.unstall()
		r.closeLog()
		r.pending = nil
		r.fs = crashed
		b.WriteString(r.files())
	case "files":
		b.WriteString(r.files())
	case "scan":
		n := 0
		err := r.l.Scan(parsePos(c.args["from"]), func(p Pos, kind uint8, payload []byte) error {
			fmt.Fprintf(&b, "%v kind=%d %s\n", p, kind, ddShow(payload))
			n++
			return nil
		})
		if n == 0 {
			b.WriteString("(none)\n")
		}
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
	case "read":
		kind, payload, err := r.l.Read(parsePos(c.args["pos"]))
		if err != nil {
			return "error: " + err.Error()
		}
		fmt.Fprintf(&b, "kind=%d %s", kind, ddShow(payload))
	case "corrupt-tail":
		// Cut the last n bytes of the file, as a write that never finished would leave it.
		ino := r.fs.file(filepath.Join(ddDir, c.args["file"]))
		n := r.intArg(c, "cut", 1)
		ino.data = ino.data[:len(ino.data)-n]
		ino.synced = slices.Clone(ino.data)
		b.WriteString(r.files())
	case "flip":
		ino := r.fs.file(filepath.Join(ddDir, c.args["file"]))
		ino.data[r.intArg(c, "off", 0)] ^= 1 << r.intArg(c, "bit", 0)
		ino.synced = slices.Clone(ino.data)
		b.WriteString("ok")
	case "rotate":
		if err := r.l.Rotate(); err != nil {
			return "error: " + err.Error()
		}
		return "end=" + r.l.End().String()
	case "segments":
		for _, s := range r.l.Segments() {
			fmt.Fprintf(&b, "seg=%d size=%d sealed=%v\n", s.Seg, s.Size, s.Sealed)
		}
	case "compact":
		drop := c.args["drop"]
		err := r.l.Compact(uint32(r.intArg(c, "seg", 0)),
			func(_ Pos, _ uint8, payload []byte) bool { return !strings.Contains(string(payload), drop) },
			func(old, new Pos) { fmt.Fprintf(&b, "moved %v -> %v\n", old, new) })
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		b.WriteString(r.files())
	case "close":
		err := r.l.Close()
		r.l = nil
		if err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	default:
		r.t.Fatalf("line %d: unknown directive %q", c.line, c.cmd)
	}
	return b.String()
}
