package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// limitsSpec has a trigger that implies two events and one that implies a single event.
const limitsSpec = `{"environment":"staging","spec":{"agent_types":["user"],"aggregate_types":{
 "order":{"events":{
   "was_placed":{"schema":{"type":"object"},"handler":[],"implications":[
     {"emit":{"aggregate_type":"audit","id":"$.metadata.actor.id","event_type":"had_entry_added","data":{"order":"$.key"}}},
     {"emit":{"aggregate_type":"audit","id":"$.metadata.actor.id","event_type":"had_entry_added","data":{"order":"$.key"}}}]},
   "was_noted":{"schema":{"type":"object"},"handler":[],"implications":[
     {"emit":{"aggregate_type":"audit","id":"$.metadata.actor.id","event_type":"had_entry_added","data":{"order":"$.key"}}}]}}},
 "audit":{"events":{"had_entry_added":{"schema":{"type":"object"},"handler":[{"increment":{"target":"entries","by":1}}]}}}}}}`

// TestServeImplicationMaxTotalFlag starts the server with --implication-max-total 1: a write
// implying two events is refused with the max_total error and writes nothing, while a write
// implying one is accepted.
func TestServeImplicationMaxTotalFlag(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"J17_ADMIN_EMAIL": "ops@example.com", "J17_ADMIN_PASSWORD": "limits-test-pass"}
	c, err := parseServeConfig([]string{"--data", dir, "--implication-max-total", "1"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := runServe(t, c, &syncBuffer{})
	_, login := post(t, base+"/api/login", "", `{"email":"ops@example.com","password":"limits-test-pass"}`)
	token, _ := login["token"].(string)
	if status, body := post(t, base+"/api/instances", token, `{"name":"limits"}`); status != 201 {
		t.Fatalf("create instance: %d %v", status, body)
	}
	if status, body := post(t, base+"/api/instances/limits/spec", token, limitsSpec); status != 200 {
		t.Fatalf("deploy: %d %v", status, body)
	}
	_, keyBody := post(t, base+"/api/instances/limits/keys", token, `{"name":"w","scope":"write","environment":"staging"}`)
	key, _ := keyBody["key"].(string)
	const order = "a0000000-0000-4000-a000-000000000001"
	event := `{"data":{},"metadata":{"actor":{"type":"user","id":"` + order + `"}}}`

	status, body := post(t, base+"/order/"+order+"/was_placed", key, event)
	if msg := fmt.Sprint(body["error"]); status != 422 || !strings.Contains(msg, "max_total 1") || !strings.Contains(msg, "nothing was written") {
		t.Errorf("two implied events under --implication-max-total 1: got %d %v, want 422 naming max_total 1", status, body)
	}
	if got := getStatus(t, base+"/order/"+order, key); got != 404 {
		t.Errorf("the refused trigger was written: GET order answers %d, want 404", got)
	}
	if got := getStatus(t, base+"/audit/"+order, key); got != 404 {
		t.Errorf("a refused implied event was written: GET audit answers %d, want 404", got)
	}
	if status, body := post(t, base+"/order/"+order+"/was_noted", key, event); status != 201 || body["implied_count"] != float64(1) {
		t.Errorf("one implied event under --implication-max-total 1: got %d %v, want 201 with implied_count 1", status, body)
	}
}

func getStatus(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
