package api

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/j17-go/j17/engine"
)

// sagaOp is one directive of a saga case file (testdata/sagas/*.json other than the specs).
type sagaOp struct {
	Write     string           `json:"write"`
	Data      json.RawMessage  `json:"data"`
	Saga      *sagaExpect      `json:"saga"`
	Events    string           `json:"events"`
	Types     []string         `json:"types"`
	ExactData []map[string]any `json:"exact_data"`
	Actors    []string         `json:"actors"`
	Absent    string           `json:"absent"`
	AdvanceMS int64            `json:"advance_ms"`
	Deploy    string           `json:"deploy"`
	Retry     string           `json:"retry"`
	Status    int              `json:"status"`
	List      *string          `json:"list"`
}

type sagaExpect struct {
	Type        string                    `json:"type"`
	Status      string                    `json:"status"`
	CurrentStep string                    `json:"current_step"`
	Steps       map[string]string         `json:"steps"`
	StepErrors  map[string]map[string]any `json:"step_errors"`
	Error       map[string]any            `json:"error"`
}

type sagaCase struct {
	Doc string   `json:"doc"`
	Ops []sagaOp `json:"ops"`
}

// sagaWait bounds how long a case waits for the saga runner to reach an expected state.
const sagaWait = 10 * time.Second

// TestSagaExamples runs every example of the Sagas page, one case file each, against a real
// server whose saga runner polls every 10 ms and whose clock the case moves.
func TestSagaExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "sagas", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "spec") {
			continue
		}
		ran++
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var c sagaCase
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			ds := startSagaServer(t)
			for i, op := range c.Ops {
				ds.runSagaOp(t, fmt.Sprintf("op %d", i), op)
			}
		})
	}
	if ran == 0 {
		t.Fatal("no saga cases found")
	}
}

func startSagaServer(t *testing.T) *dataServer {
	t.Helper()
	ds := startDataServer(t, "", engine.Options{SagaPoll: 10 * time.Millisecond})
	ds.deploy(sagaSpec(t, "spec.json"), true)
	return ds
}

func sagaSpec(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sagas", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// admin calls a /_admin route as the operator of the staging environment.
func (ds *dataServer) admin(method, path string) response {
	ds.t.Helper()
	return ds.do(method, path, ds.token, nil, "X-J17-Instance", "myapp", "X-J17-Environment", "staging")
}

func (ds *dataServer) runSagaOp(t *testing.T, what string, op sagaOp) {
	t.Helper()
	switch {
	case op.Write != "":
		body := map[string]any{"data": op.Data, "metadata": actor()}
		want := op.Status
		if want == 0 {
			want = 201
		}
		expect(t, what+" write "+op.Write, ds.post(op.Write, body), want)
	case op.Saga != nil:
		ds.waitSaga(t, what, *op.Saga)
	case op.Events != "":
		var sub []map[string]any
		if len(op.Data) > 0 {
			if err := json.Unmarshal(op.Data, &sub); err != nil {
				t.Fatalf("%s: data: %v", what, err)
			}
		}
		ds.waitEvents(t, what, op, sub)
	case op.Absent != "":
		expect(t, what+" absent "+op.Absent, ds.get(op.Absent), 404)
	case op.AdvanceMS != 0:
		ds.clock.Advance(time.Duration(op.AdvanceMS) * time.Millisecond)
	case op.Deploy != "":
		ds.deploy(sagaSpec(t, op.Deploy), true)
	case op.Retry != "":
		id := ds.sagaOf(t, op.Retry)["saga_id"].(string)
		res := ds.admin("POST", "/_admin/sagas/"+id+"/retry")
		expect(t, what+" retry", res, op.Status)
	case op.List != nil:
		res := ds.admin("GET", "/_admin/sagas"+*op.List)
		expect(t, what+" list", res, 200)
		got := []string{}
		for _, s := range res.body["data"].([]any) {
			got = append(got, s.(map[string]any)["type"].(string))
		}
		sort.Strings(got)
		if want := append([]string{}, op.Types...); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: list %s: got types %v, want %v", what, *op.List, got, want)
		}
		if int(res.body["total"].(float64)) != len(got) {
			t.Fatalf("%s: list %s: got total %v, want %d", what, *op.List, res.body["total"], len(got))
		}
	default:
		t.Fatalf("%s: empty directive", what)
	}
}

// sagaOf returns the one saga of type typ.
func (ds *dataServer) sagaOf(t *testing.T, typ string) map[string]any {
	t.Helper()
	res := ds.admin("GET", "/_admin/sagas")
	expect(t, "list sagas", res, 200)
	var found map[string]any
	for _, s := range res.body["data"].([]any) {
		m := s.(map[string]any)
		if m["type"] == typ {
			if found != nil {
				t.Fatalf("two sagas of type %s", typ)
			}
			found = m
		}
	}
	if found == nil {
		return nil
	}
	res = ds.admin("GET", "/_admin/sagas/"+found["saga_id"].(string))
	expect(t, "get saga", res, 200)
	return res.body
}

func (ds *dataServer) waitSaga(t *testing.T, what string, want sagaExpect) {
	t.Helper()
	deadline := time.Now().Add(sagaWait)
	for {
		got := ds.sagaOf(t, want.Type)
		diff := "no saga"
		if got != nil {
			diff = sagaDiff(got, want)
		}
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(got)
			t.Fatalf("%s: saga %s: %s; saga is %s", what, want.Type, diff, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func sagaDiff(got map[string]any, want sagaExpect) string {
	if got["ok"] != true {
		return "answer is not ok"
	}
	if got["status"] != want.Status {
		return fmt.Sprintf("got status %v, want %s", got["status"], want.Status)
	}
	if want.CurrentStep != "" && got["current_step"] != want.CurrentStep {
		return fmt.Sprintf("got current_step %v, want %s", got["current_step"], want.CurrentStep)
	}
	steps := map[string]map[string]any{}
	for _, s := range got["steps"].([]any) {
		m := s.(map[string]any)
		steps[m["name"].(string)] = m
	}
	for name, st := range want.Steps {
		if steps[name]["status"] != st {
			return fmt.Sprintf("got step %s status %v, want %s", name, steps[name]["status"], st)
		}
		switch st {
		case "completed":
			if _, ok := steps[name]["completed_at"].(float64); !ok {
				return fmt.Sprintf("step %s has no completed_at", name)
			}
		case "waiting":
			if _, ok := steps[name]["waiting_since"].(float64); !ok {
				return fmt.Sprintf("step %s has no waiting_since", name)
			}
		}
	}
	for name, e := range want.StepErrors {
		ge, _ := steps[name]["error"].(map[string]any)
		if d := subsetDiff(ge, e); d != "" {
			return "step " + name + " error: " + d
		}
	}
	if want.Error != nil {
		ge, _ := got["error"].(map[string]any)
		if d := subsetDiff(ge, want.Error); d != "" {
			return "saga error: " + d
		}
	}
	return ""
}

func subsetDiff(got, want map[string]any) string {
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			return fmt.Sprintf("got %s=%v, want %v", k, got[k], v)
		}
	}
	return ""
}

func (ds *dataServer) waitEvents(t *testing.T, what string, op sagaOp, sub []map[string]any) {
	t.Helper()
	deadline := time.Now().Add(sagaWait)
	for {
		res := ds.get(op.Events + "/events")
		var evs []map[string]any
		if res.status == 200 {
			for _, e := range res.body["events"].([]any) {
				evs = append(evs, e.(map[string]any))
			}
		}
		types := []string{}
		for _, e := range evs {
			types = append(types, e["type"].(string))
		}
		if reflect.DeepEqual(types, op.Types) {
			for i, want := range sub {
				if d := subsetDiff(evs[i]["data"].(map[string]any), want); d != "" {
					t.Fatalf("%s: %s event %d data: %s", what, op.Events, i, d)
				}
			}
			for i, want := range op.ExactData {
				if got := evs[i]["data"].(map[string]any); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: %s event %d: got data %v, want %v", what, op.Events, i, got, want)
				}
			}
			for i, want := range op.Actors {
				a := evs[i]["metadata"].(map[string]any)["actor"].(map[string]any)
				if a["id"] != want && a["type"] != want {
					t.Fatalf("%s: %s event %d: got actor %v, want %s", what, op.Events, i, a, want)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s: got event types %v, want %v", what, op.Events, types, op.Types)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
