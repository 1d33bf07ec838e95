package storage

import (
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
