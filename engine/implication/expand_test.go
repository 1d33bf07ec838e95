package implication

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/tick"
)

const (
	idA = "a0000000-0000-4000-a000-000000000001"
	idB = "a0000000-0000-4000-a000-000000000002"
)

func loadSpec(t *testing.T) *spec.Spec {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	sp, rep := spec.Load(raw)
	if !rep.OK() {
		t.Fatalf("spec: %v", rep.Err())
	}
	return sp
}

func trigger(t *testing.T, sp *spec.Spec, typ, data string) Trigger {
	t.Helper()
	agg, _ := sp.Aggregate("src")
	return Trigger{
		Stream: storage.StreamKey{Type: "src", ID: idA}, Spec: agg.Events[typ], Data: []byte(data),
		Metadata: []byte(`{"actor":{"id":"` + idB + `","type":"user"},"timestamp":100}`), Timestamp: 100,
	}
}

func TestExpand(t *testing.T) {
	sp := loadSpec(t)
	cases := []struct {
		name, event, data, state string
		limits                   Limits
		// maxDataDepth is the Expander's MaxDataDepth; 0 means 100, the server's.
		maxDataDepth int
		// want lists the implied events as "type:id event data".
		want      []string
		schedules int
		err       error
	}{
		{name: "map skips by condition", event: "fanned", data: `{"items":[{"id":"` + idA + `","n":1},{"id":"` + idB + `","n":2,"skip":true}]}`,
			want: []string{"dst:" + idA + ` got {"n":1,"from":"src:` + idA + `"}`}},
		{name: "map over $entries", event: "entries", data: `{"m":{"` + idB + `":7}}`,
			want: []string{"dst:" + idB + ` got {"n":7}`}},
		{name: "map over nothing", event: "fanned", data: `{}`},
		{name: "map over a non-array", event: "fanned", data: `{"items":3}`, err: ErrResolve},
		{name: "@ is S0", event: "stateful", data: `{}`, state: `{"on":true,"n":4}`,
			want: []string{`dst:log got {"n":4}`}},
		{name: "@ condition false", event: "stateful", data: `{}`, state: `{"on":false}`},
		{name: "pipeline steps in order", event: "piped", data: `{}`,
			want: []string{`dst:log got {"n":1}`, `dst:log got {"n":2}`}},
		{name: "schedule resolved, no event", event: "later", data: `{"n":3}`, schedules: 1},
		{name: "chain within depth", event: "deep", data: `{}`, limits: Limits{MaxDepth: 2, MaxTotal: 10},
			want: []string{"dst:" + idA + ` relay {"n":0}`, "dst:" + idA + ` got {"n":1}`}},
		{name: "chain beyond depth", event: "deep", data: `{}`, limits: Limits{MaxDepth: 1, MaxTotal: 10}, err: ErrLimit},
		{name: "beyond total", event: "deep", data: `{}`, limits: Limits{MaxDepth: 5, MaxTotal: 1}, err: ErrLimit},
		{name: "schema of implied data", event: "fanned", data: `{"items":[{"id":"` + idA + `","n":"x"}]}`, err: errAny},
		{name: "any object schema", event: "copies", data: `{"v":{"w":"x"}}`, want: []string{`dst:log kept {"v":{"w":"x"}}`}},
		{name: "implied data at the depth limit", event: "copies", data: `{"v":[[1]]}`, maxDataDepth: 3,
			want: []string{`dst:log kept {"v":[[1]]}`}},
		{name: "implied data beyond the depth limit", event: "copies", data: `{"v":[[[1]]]}`, maxDataDepth: 3, err: errAny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			limits := c.limits
			if limits == (Limits{}) {
				limits = DefaultLimits
			}
			maxDataDepth := c.maxDataDepth
			if maxDataDepth == 0 {
				maxDataDepth = 100
			}
			x := Expander{Spec: sp, Rules: ident.NewRules(sp.Singletons()), Limits: limits, MaxDataDepth: maxDataDepth, State: func(storage.StreamKey) (tick.Value, error) {
				if c.state == "" {
					return tick.Object(), nil
				}
				return tick.ParseJSON([]byte(c.state))
			}}
			res, err := x.Expand([]Trigger{trigger(t, sp, c.event, c.data)}, false)
			switch {
			case c.err == errAny && err == nil, c.err != nil && c.err != errAny && !errors.Is(err, c.err):
				t.Fatalf("got error %v, want %v", err, c.err)
			case c.err == nil && err != nil:
				t.Fatalf("got error %v, want none", err)
			case c.err != nil:
				return
			}
			var got []string
			for _, im := range res.Events {
				got = append(got, im.Stream.String()+" "+im.Event.Type+" "+string(im.Event.Data))
				if !strings.Contains(string(im.Event.Metadata), `"implied_by":{"depth":`) || !strings.Contains(string(im.Event.Metadata), idB) {
					t.Errorf("metadata %s lacks implied_by or the trigger's actor", im.Event.Metadata)
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			if len(res.Schedules) != c.schedules {
				t.Errorf("got %d schedules, want %d", len(res.Schedules), c.schedules)
			}
		})
	}
}

// errAny stands for "some refusal" in the table.
var errAny = errors.New("any error")

func TestScheduleResolvesAgainstTrigger(t *testing.T) {
	sp := loadSpec(t)
	x := Expander{Spec: sp, Rules: ident.NewRules(sp.Singletons()), Limits: DefaultLimits, State: func(storage.StreamKey) (tick.Value, error) { return tick.Object(), nil }}
	res, err := x.Expand([]Trigger{trigger(t, sp, "later", `{"n":3}`)}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Schedules[0]
	if s.Target.String() != "dst:"+idA || string(s.Data) != `{"n":3}` || s.Delay.Hours() != 1 {
		t.Errorf("got target %s data %s delay %v, want dst:%s {\"n\":3} 1h", s.Target, s.Data, s.Delay, idA)
	}
	want := Match{AggregateType: "src", ID: idA, EventType: "fanned"}
	if len(s.CancelOn) != 1 || s.CancelOn[0] != want {
		t.Errorf("got cancel_on %+v, want [%+v] (the key's id part)", s.CancelOn, want)
	}
	if s.By != (ImpliedBy{Key: "src:" + idA, EventType: "later", Depth: 1}) {
		t.Errorf("got implied_by %+v", s.By)
	}
}

// TestStateReadOnlyWhereUsed: S0 is asked for only for triggers whose implications read "@";
// for the others, reading it may fold a whole stream for nothing.
func TestStateReadOnlyWhereUsed(t *testing.T) {
	sp := loadSpec(t)
	for _, c := range []struct {
		event, data string
		reads       bool
	}{
		{"stateful", `{}`, true},
		{"fanned", `{"items":[{"id":"` + idA + `","n":1}]}`, false},
		{"piped", `{}`, false},
	} {
		var asked []storage.StreamKey
		x := Expander{Spec: sp, Rules: ident.NewRules(sp.Singletons()), Limits: DefaultLimits, State: func(k storage.StreamKey) (tick.Value, error) {
			asked = append(asked, k)
			return tick.Object(), nil
		}}
		if _, err := x.Expand([]Trigger{trigger(t, sp, c.event, c.data)}, false); err != nil {
			t.Fatalf("%s: %v", c.event, err)
		}
		if got := len(asked) > 0; got != c.reads {
			t.Errorf("%s: S0 read for %v, want a read: %v", c.event, asked, c.reads)
		}
	}
}
