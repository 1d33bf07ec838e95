package write

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	json "github.com/goccy/go-json"
)

// decodeBoth decodes obj by decode and by the decoder, and reports any member that differs.
func decodeBoth[T any](t *testing.T, obj string, decode func([]byte) (T, error), members func(T) []json.RawMessage) {
	t.Helper()
	fast, err := decode([]byte(obj))
	if err != nil {
		t.Fatalf("%s: %v", obj, err)
	}
	var slow T
	if err := json.Unmarshal([]byte(obj), &slow); err != nil {
		t.Fatalf("%s: decoder: %v", obj, err)
	}
	a, b := members(fast), members(slow)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) || (a[i] == nil) != (b[i] == nil) {
			t.Errorf("%s: member %d is %q, the decoder reads %q", obj, i, a[i], b[i])
		}
	}
}

func metadataMembers(m metadataIn) []json.RawMessage {
	return []json.RawMessage{m.Actor, m.Target, m.PreviousLength, m.SkipOCC, m.Timestamp}
}

// The member scanner reads bodies as the decoder reads them: names matched ignoring ASCII case,
// the last of duplicates winning, escaped or non-ASCII names left to the decoder, strings and
// nesting skipped whole.
func TestMembersMatchTheDecoder(t *testing.T) {
	for _, obj := range []string{
		`{}`,
		`{ }`,
		`{"data":{"a":1},"metadata":{"actor":{"type":"user","id":"x"}}}`,
		`{"DATA":1,"Metadata":2}`,
		`{"data":1,"data":2}`,
		`{"data":1,"dAtA":null}`,
		`{"d\u0061ta":3,"metadata":4}`,
		`{"dàta":3,"data":4}`,
		"{ \"data\" :\t[1, {\"}\":\"]\"}] ,\n\"metadata\" : \"a\\\"}b\" }",
		`{"other":{"data":1},"data":"{\"metadata\":1}"}`,
		`{"data":-1.5e3,"metadata":true,"x":false,"y":null}`,
	} {
		decodeBoth(t, obj, decodeSingle, func(b singleBody) []json.RawMessage { return []json.RawMessage{b.Data, b.Metadata} })
		decodeBoth(t, obj, decodeBatch, func(b batchBody) []json.RawMessage { return []json.RawMessage{b.Events, b.Metadata} })
		decodeBoth(t, obj, decodeEvent, func(e batchEvent) []json.RawMessage { return []json.RawMessage{e.Type, e.Data} })
		decodeBoth(t, obj, decodeRef, func(r refIn) []json.RawMessage { return []json.RawMessage{r.Type, r.ID} })
	}
	// Generated metadata: every member name in several cases, repeated, in random order, with
	// values of every kind and random space.
	rnd := rand.New(rand.NewSource(1))
	names := []string{"actor", "ACTOR", "Target", "target", "previous_length", "Skip_Occ", "skip_occ", "timestamp", "TimeStamp", "other"}
	values := []string{`{"type":"user","id":"a"}`, `null`, `12`, `-0.5`, `true`, `"s\"t"`, `[{"a":[]},"]"]`, `{}`}
	space := []string{"", " ", "\n\t"}
	for i := 0; i < 2000; i++ {
		var b bytes.Buffer
		b.WriteString("{" + space[rnd.Intn(3)])
		for j, n := 0, rnd.Intn(6); j < n; j++ {
			if j > 0 {
				b.WriteString("," + space[rnd.Intn(3)])
			}
			fmt.Fprintf(&b, "%q%s:%s%s%s", names[rnd.Intn(len(names))], space[rnd.Intn(3)], space[rnd.Intn(3)], values[rnd.Intn(len(values))], space[rnd.Intn(3)])
		}
		b.WriteString("}")
		decodeBoth(t, b.String(), decodeMetadata, metadataMembers)
	}
}

func TestStrMatchesTheDecoder(t *testing.T) {
	for _, raw := range []string{`"user"`, `""`, `"a\"b"`, `"\u0041"`, `"àb"`, "\"a\xffb\"", `"a/b c~"`} {
		got, err := str([]byte(raw), "p", ".q")
		var want string
		if json.Unmarshal([]byte(raw), &want) != nil || err != nil || got != want {
			t.Errorf("%s: got %q (%v), the decoder reads %q", raw, got, err, want)
		}
	}
}
