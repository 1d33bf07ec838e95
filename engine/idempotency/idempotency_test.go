package idempotency

import (
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// expand turns "@N" into N bytes, so that long keys stay readable in the test data.
func expand(s string) string {
	if n, err := strconv.Atoi(strings.TrimPrefix(s, "@")); err == nil && strings.HasPrefix(s, "@") {
		return strings.Repeat("k", n)
	}
	return s
}

func TestParseHeader(t *testing.T) {
	raw, err := os.ReadFile("testdata/keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name    string
		Headers []string
		Key     string
		Absent  bool
		Error   string
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		var vals [][]byte
		for _, h := range c.Headers {
			vals = append(vals, []byte(expand(h)))
		}
		key, present, err := ParseHeader(vals)
		switch {
		case c.Error != "":
			if err == nil || err.Error() != c.Error {
				t.Errorf("%s: got error %v, want %q", c.Name, err, c.Error)
			}
		case err != nil:
			t.Errorf("%s: got error %v, want key %q", c.Name, err, c.Key)
		case present == c.Absent || key != expand(c.Key):
			t.Errorf("%s: got key %q present %v, want %q present %v", c.Name, key, present, expand(c.Key), !c.Absent)
		}
	}
}

func TestFingerprintIgnoresKeyOrderAndWhitespace(t *testing.T) {
	a := Fingerprint([]byte(`{"a":1,"b":{"y":2,"x":[1,2]}}`))
	b := Fingerprint([]byte("{ \"b\": {\"x\": [1, 2], \"y\": 2},\n \"a\": 1 }"))
	c := Fingerprint([]byte(`{"a":1,"b":{"y":2,"x":[2,1]}}`))
	if a != b {
		t.Error("reordered keys gave another fingerprint")
	}
	if a == c {
		t.Error("a different array order gave the same fingerprint")
	}
}

func TestMarkerRoundTrip(t *testing.T) {
	m := Marker{Hash: Fingerprint([]byte(`{}`)), LastUsed: 1700000000000, Status: 201, RequestID: "r", Type: "user", ID: "global", From: 3, Count: 2, Batch: true}
	got, err := Decode(m.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash != m.Hash || got.From != 3 || got.Count != 2 || !got.Batch || got.RequestID != "r" {
		t.Errorf("round trip: got %+v, want %+v", got, m)
	}
	if _, err := Decode([]byte(`{"hash":"zz"}`)); !errors.Is(err, ErrBadMarker) {
		t.Errorf("bad hash: got %v, want ErrBadMarker", err)
	}
}

func TestMarkerLivesTTLAfterLastUse(t *testing.T) {
	used := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := Marker{LastUsed: used.UnixMilli()}
	if !m.Live(used.Add(TTL-time.Millisecond), TTL) {
		t.Error("dead before TTL")
	}
	if m.Live(used.Add(TTL), TTL) {
		t.Error("alive at TTL")
	}
}

func TestLocksSerializeOneKey(t *testing.T) {
	var l Locks
	var wg sync.WaitGroup
	inside, most := 0, 0
	var mu sync.Mutex
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := l.Lock("k")
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			time.Sleep(100 * time.Microsecond)
			mu.Lock()
			inside--
			mu.Unlock()
			unlock()
		}()
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d holders of one key at once, want 1", most)
	}
	if len(l.keys) != 0 {
		t.Errorf("%d lock entries left after every release, want 0", len(l.keys))
	}
}
