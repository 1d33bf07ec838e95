package tombstone

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/j17-go/j17/storage"
)

func TestRefPuts(t *testing.T) {
	ev := func(meta string) storage.NewEvent {
		return storage.NewEvent{Type: "x", Metadata: json.RawMessage(meta)}
	}
	msg := storage.StreamKey{Type: "message", ID: "m1"}
	cases := []struct {
		name string
		in   []storage.Append
		want []string
	}{
		{"actor and target", []storage.Append{{Stream: msg, Events: []storage.NewEvent{ev(`{"actor":{"type":"user","id":"alice"},"target":{"type":"user","id":"bob"}}`)}}},
			[]string{"actor\x00user\x00alice\x00message\x00m1", "target\x00user\x00bob\x00message\x00m1"}},
		{"one put per entity and stream", []storage.Append{{Stream: msg, Events: []storage.NewEvent{ev(`{"actor":{"type":"user","id":"alice"}}`), ev(`{"actor":{"type":"user","id":"alice"}}`)}}},
			[]string{"actor\x00user\x00alice\x00message\x00m1"}},
		{"metadata without refs", []storage.Append{{Stream: msg, Events: []storage.NewEvent{ev(`{"timestamp":1}`), ev(`not json`), {Type: "x"}}}}, nil},
		{"id with a NUL is skipped", []storage.Append{{Stream: msg, Events: []storage.NewEvent{ev(`{"actor":{"type":"user","id":"a\u0000b"}}`)}}}, nil},
	}
	for _, c := range cases {
		var got []string
		for _, p := range RefPuts(c.in) {
			if p.Space != RefSpace {
				t.Errorf("%s: put in space %q, want %q", c.name, p.Space, RefSpace)
			}
			got = append(got, p.Key)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
