package e2e

import "testing"

// TestStreamIDsIncreaseAcrossAggregates writes one event at a time to several aggregates and
// types of one environment and expects every answered stream id to be greater than the one
// before (CONTRACT.md § Decisions: strictly increasing within an instance and environment).
func TestStreamIDsIncreaseAcrossAggregates(t *testing.T) {
	f := sharedFixture(t)
	key := f.keys["staging"]["write"]
	base := f.srv.url()
	paths := []string{"/counter/" + newUUID(4), "/counter/" + newUUID(5), "/order/" + newHumane(), "/counter/global"}
	events := []string{"was_incremented", "was_incremented", "was_placed", "was_incremented"}
	last := ""
	for i := 0; i < 40; i++ {
		j := i % len(paths)
		r := send(t, base, dataCall(key, "POST", paths[j]+"/"+events[j], actorBody(map[string]any{}, nil)), 201, "sequential write")
		id, _ := r.obj()["stream_id"].(string)
		if !streamIDPattern.MatchString(id) {
			t.Fatalf("write %d: stream_id %q, want <ms>-<seq>", i, id)
		}
		if last != "" && !streamIDLess(last, id) {
			t.Fatalf("write %d to %s: stream_id %s is not greater than the previous %s", i, paths[j], id, last)
		}
		last = id
	}
}
