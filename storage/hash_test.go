package storage

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/j17-go/j17/storage/canonical"
)

// The "key" member of canonical(event) is the canonical string of "<type>:<id>", however the
// parts are escaped.
func TestAppendKeyString(t *testing.T) {
	for _, k := range []StreamKey{
		{Type: "order", ID: "o-1"},
		{Type: `q"uote`, ID: `back\slash`},
		{Type: "ctl\x01", ID: "tab\t"},
		{Type: "é", ID: "😀"},
		{Type: "bad\xff", ID: "\xe2\x82"},
		{Type: "a:b", ID: ":"},
	} {
		want := canonical.AppendString(nil, k.String())
		if got := appendKeyString([]byte("prefix"), k); string(got) != "prefix"+string(want) {
			t.Errorf("%q: got %s, want prefix%s", k.String(), got, want)
		}
	}
}

// TestContentHashSizes: events built on the stack, in a pooled buffer (reused by a smaller event
// after a larger one) and in one too large to pool all hash canonical(event).
func TestContentHashSizes(t *testing.T) {
	k := StreamKey{Type: "order", ID: "o-1"}
	meta := []byte(`{"actor":{"id":"u-1","type":"user"},"timestamp":100}`)
	for _, n := range []int{0, 300, 512, 2000, 1500, 100 << 10, 700} {
		data := []byte(`{"s":"` + strings.Repeat("x", n) + `"}`)
		want := sha256.Sum256([]byte(`{"data":` + string(data) + `,"key":"order:o-1","metadata":` + string(meta) + `,"type":"was_placed"}`))
		if got := ContentHash(k, "was_placed", data, meta); got != want {
			t.Errorf("data of %d bytes: got %x, want %x", len(data), got, want)
		}
	}
}
