package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

const crashSagaSpec = `{"environment":"staging","spec":{"agent_types":["user"],"aggregate_types":{"flow":{"events":{
 "was_started":{"schema":{"type":"object"},"handler":[]},
 "did_a":{"schema":{"type":"object"},"handler":[]},
 "did_b":{"schema":{"type":"object"},"handler":[]},
 "did_c":{"schema":{"type":"object"},"handler":[]},
 "was_asked":{"schema":{"type":"object"},"handler":[]},
 "was_answered":{"schema":{"type":"object"},"handler":[]},
 "did_d":{"schema":{"type":"object"},"handler":[]},
 "was_done":{"schema":{"type":"object"},"handler":[]}}}},
 "modules":{"sagas":{"work":{"trigger":{"aggregate_type":"flow","event_type":"was_started"},"steps":[
  {"name":"a","emit":{"aggregate_type":"flow","id":"$.id","event_type":"did_a","data":{}}},
  {"name":"b","emit":{"aggregate_type":"flow","id":"$.id","event_type":"did_b","data":{}}},
  {"name":"c","emit":{"aggregate_type":"flow","id":"$.id","event_type":"did_c","data":{}}},
  {"name":"ask","emit":{"aggregate_type":"flow","id":"$.id","event_type":"was_asked","data":{}},
   "await":{"aggregate_type":"flow","event_types":["was_answered"]},"timeout_ms":3600000},
  {"name":"d","emit":{"aggregate_type":"flow","id":"$.id","event_type":"did_d","data":{}}}],
  "on_complete":{"aggregate_type":"flow","id":"$.id","event_type":"was_done","data":{}}}}}}}`

const crashSagas = 30

func flowID(i int) string { return fmt.Sprintf("a0000000-0000-4000-a000-%012d", i) }

// TestSagasSurviveSIGKILL kills the server while its sagas are mid-step, twice: once while the
// runner emits the steps that follow the triggers, once while awaited replies are arriving. After
// each restart every saga resumes where it was, and no step's event exists twice.
func TestSagasSurviveSIGKILL(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, dir)
	login := `{"email":"ops@example.com","password":"crash-test-pass"}`
	token := c.must(t, 200, "POST", "/api/login", "", login)["token"].(string)
	c.must(t, 201, "POST", "/api/instances", token, `{"name":"crash"}`)
	c.must(t, 200, "POST", "/api/instances/crash/spec", token, crashSagaSpec)
	key := c.must(t, 201, "POST", "/api/instances/crash/keys", token, `{"name":"w","scope":"write","environment":"staging"}`)["key"].(string)
	body := `{"data":{},"metadata":{"actor":{"type":"user","id":"a0000000-0000-4000-a000-000000000001"}}}`

	for i := 0; i < crashSagas; i++ {
		c.must(t, 201, "POST", "/flow/"+flowID(i)+"/was_started", key, body)
	}
	t.Logf("killed with %d of %d sagas waiting", sagasAt(t, c, token, "running", "ask"), crashSagas)
	killChild(t, c)

	c = startChild(t, dir)
	token = c.must(t, 200, "POST", "/api/login", "", login)["token"].(string)
	waitSagas(t, c, token, "running", "ask", crashSagas)
	for i := 0; i < crashSagas; i++ {
		c.must(t, 201, "POST", "/flow/"+flowID(i)+"/was_answered", key, body)
	}
	t.Logf("killed with %d of %d sagas completed", sagasAt(t, c, token, "completed", ""), crashSagas)
	killChild(t, c)

	c = startChild(t, dir)
	token = c.must(t, 200, "POST", "/api/login", "", login)["token"].(string)
	waitSagas(t, c, token, "completed", "", crashSagas)
	want := []string{"was_started", "did_a", "did_b", "did_c", "was_asked", "was_answered", "did_d", "was_done"}
	for i := 0; i < crashSagas; i++ {
		out := c.must(t, 200, "GET", "/flow/"+flowID(i)+"/events", key, "")
		var got []string
		for _, e := range out["events"].([]any) {
			got = append(got, e.(map[string]any)["type"].(string))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("flow %d: got events %v, want %v", i, got, want)
		}
	}
}

func killChild(t *testing.T, c *crashChild) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child exit: %v, want killed\n%s", err, c.out.String())
	}
}

// waitSagas waits until n sagas have status, each at step current when current is set.
func waitSagas(t *testing.T, c *crashChild, token, status, current string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready := sagasAt(t, c, token, status, current)
		if ready == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sagas %s at %q, want %d", ready, status, current, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sagasAt counts the sagas with status, at step current when current is set.
func sagasAt(t *testing.T, c *crashChild, token, status, current string) int {
	t.Helper()
	out := c.must(t, 200, "GET", "/_admin/sagas?limit=1000&status="+status, token, "",
		"X-J17-Instance", "crash", "X-J17-Environment", "staging")
	n := 0
	for _, s := range out["data"].([]any) {
		if current == "" || s.(map[string]any)["current_step"] == current {
			n++
		}
	}
	return n
}
