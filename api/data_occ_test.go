package api

import (
	"fmt"
	"sync"
	"testing"

	"github.com/j17-go/j17/engine"
)

// TestPreviousLengthRace: 32 writers race external OCC on one aggregate, each retrying with the
// length it last saw. Each length has exactly one winner, and the final length is the number of
// 201s.
func TestPreviousLengthRace(t *testing.T) {
	ds := startDataServer(t, "", engine.Options{NoSync: true})
	const writers, rounds = 32, 3
	var mu sync.Mutex
	created := 0
	winners := map[float64]int{} // previous_length -> number of 201s
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				res := ds.get("/counter/global/length")
				if res.status != 200 {
					t.Errorf("length: status %d", res.status)
					return
				}
				n := res.body["length"].(float64)
				body := fmt.Sprintf(`{"data":{"note":"w%d"},"metadata":{"actor":{"type":"user","id":%q},"previous_length":%v}}`, w, userA, n)
				res = ds.post("/counter/global/was_noted", body)
				mu.Lock()
				switch res.status {
				case 201:
					created++
					winners[n]++
				case 409:
					if res.body["code"] != "conflict" || field(res.body, "details.expected") != n {
						t.Errorf("409 body %s, want code conflict and details.expected %v", res.raw, n)
					}
				default:
					t.Errorf("write: status %d, body %s", res.status, res.raw)
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	for n, c := range winners {
		if c != 1 {
			t.Errorf("previous_length %v had %d winners, want 1", n, c)
		}
	}
	res := ds.get("/counter/global/length")
	if got := res.body["length"].(float64); int(got) != created {
		t.Fatalf("final length %v, want the number of 201s %d", got, created)
	}
	if created == 0 {
		t.Fatal("no writer won")
	}
}
