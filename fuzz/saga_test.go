package fuzz

import (
	"bytes"
	"testing"

	"github.com/j17-go/j17/engine/saga"
)

// sagaSeedStates are stored saga states: one just created, one waiting, one dead-lettered.
var sagaSeedStates = []string{
	`{"saga_id":"saga_1","type":"checkout","status":"running","depth":1,"started_at":1,"trigger":{"aggregate_type":"cart","id":"x","type":"checkout_started","data":{"a":1}},"snapshot":{"owner":"a"},"current":0,"steps":[{"name":"a","status":"pending"}]}`,
	`{"saga_id":"saga_2","type":"t","status":"running","depth":2,"started_at":1,"trigger":{"aggregate_type":"c","id":"x","type":"e","data":{}},"current":1,"steps":[{"name":"a","status":"completed","completed_at":2,"result":{"data":{},"type":"e"}},{"name":"b","status":"waiting","waiting_since":3,"deadline_ms":4000,"await_type":"c","await_id":"x","await_from":3}]}`,
	`{"saga_id":"saga_3","type":"t","status":"dead_lettered","depth":1,"started_at":1,"trigger":{"aggregate_type":"c","id":"x","type":"e","data":{}},"current":1,"compensating":true,"attempts":3,"steps":[{"name":"a","status":"completed","error":{"message":"emit_failed","type":"validation_error","path":"data.x","step":"a"}},{"name":"b","status":"failed"}],"error":{"message":"timeout","type":"timeout","step":"b"}}`,
	`{"saga_id":"","current":-1}`,
	`[]`,
}

// FuzzSagaDecode: decoding a stored saga never panics; a state that decodes encodes and decodes
// again to the same state, and its scope and current step can be computed without panicking.
func FuzzSagaDecode(f *testing.F) {
	for _, s := range sagaSeedStates {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		st, err := saga.Decode(raw)
		if err != nil {
			return
		}
		again, err := saga.Decode(st.Encode())
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		// Compared through their encoding, which is what the store keeps.
		if got, want := again.Encode(), st.Encode(); !bytes.Equal(got, want) {
			t.Fatalf("round trip: got %s, want %s", got, want)
		}
		_ = st.CurrentStep()
		_ = st.Waiting()
		_, _ = st.Scope()
	})
}
