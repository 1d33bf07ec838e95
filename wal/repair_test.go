package wal

import (
	"os"
	"path/filepath"
	"testing"
)

// Repair cuts the log at the first bad record, keeps a copy of everything it cut, and leaves a
// log that opens with every record before the damage.
func TestRepair(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{SegmentSize: 1024, CompressThreshold: -1})
	var ps []Pos
	for i := range 30 {
		p, err := l.Append(1, testPayload(i, 100))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	l.Close()

	if rep, err := Repair(dir); err != nil || rep != (RepairReport{}) {
		t.Fatalf("Repair of a sound log = %+v, %v; want nothing cut", rep, err)
	}

	victim := ps[12] // in segment 2, with records after it there and in later segments
	path := filepath.Join(dir, segName(victim.Seg))
	data, _ := os.ReadFile(path)
	data[victim.Off+headerSize+3] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); !IsCorruption(err) {
		t.Fatalf("Open of a damaged log = %v, want corruption", err)
	}

	var wantCut int64 = int64(len(data)) - int64(victim.Off)
	for seg := victim.Seg + 1; ; seg++ {
		st, err := os.Stat(filepath.Join(dir, segName(seg)))
		if err != nil {
			break
		}
		wantCut += st.Size()
	}
	rep, err := Repair(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.File != path || rep.Offset != int64(victim.Off) || rep.BytesCut != wantCut {
		t.Fatalf("Repair = %+v, want file %s offset %d bytes cut %d", rep, path, victim.Off, wantCut)
	}
	tail, err := os.ReadFile(filepath.Join(rep.CutFile, segName(victim.Seg)+".tail"))
	if err != nil || string(tail) != string(data[victim.Off:]) {
		t.Fatalf("cut copy of the damaged tail: %d bytes, %v", len(tail), err)
	}
	if _, err := os.Stat(filepath.Join(rep.CutFile, segName(victim.Seg+1))); err != nil {
		t.Fatalf("later segment not moved into the cut copy: %v", err)
	}

	l2 := mustOpen(t, dir, Options{})
	got := scanAll(t, l2)
	if len(got) != 12 {
		t.Fatalf("%d records after repair, want the 12 before the damage", len(got))
	}
	if l2.End() != victim {
		t.Fatalf("End() after repair = %v, want %v", l2.End(), victim)
	}
	if _, err := l2.Append(1, []byte("after repair")); err != nil {
		t.Fatal(err)
	}
}
