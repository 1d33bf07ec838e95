package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/implication"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/tick"
)

// Exit statuses of the spec, handler and events commands.
const (
	exitOK      = 0
	exitInvalid = 1 // the input has errors
	exitUsage   = 2 // the command line is wrong
)

const specUsage = `usage: j17 spec validate spec.json

Validates a spec (bare or {"spec": ...} wrapped) and prints every error and warning as
file:line:col: pointer: message. Exits 1 when there are errors. "-" reads standard input.
`

// cmdSpec runs "j17 spec <subcommand>".
func cmdSpec(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "validate" {
		fmt.Fprint(stderr, specUsage)
		return exitUsage
	}
	if len(args) != 2 {
		fmt.Fprint(stderr, specUsage)
		return exitUsage
	}
	s, code := loadSpecFile(args[1], stdout, stderr)
	if s == nil {
		return code
	}
	events := 0
	for _, name := range s.AggregateTypes() {
		a, _ := s.Aggregate(name)
		events += len(a.EventTypes)
	}
	fmt.Fprintf(stdout, "%s: ok (%d aggregate types, %d event types)\n", args[1], len(s.AggregateTypes()), events)
	return exitOK
}

// loadSpecFile reads and loads a spec, printing its errors and warnings; on failure the spec is
// nil and the exit status says why.
func loadSpecFile(path string, stdout, stderr io.Writer) (*spec.Spec, int) {
	raw, err := readInput(path, spec.MaxSpecBytes)
	if err != nil {
		fmt.Fprintf(stderr, "j17: %v\n", err)
		return nil, exitInvalid
	}
	s, rep := spec.Load(raw)
	for _, is := range rep.Errors {
		fmt.Fprintf(stdout, "%s:%d:%d: %s: %s\n", path, is.Line, is.Column, pointerText(is.Pointer), is.Message)
	}
	for _, is := range rep.Warnings {
		fmt.Fprintf(stdout, "%s:%d:%d: %s: warning: %s\n", path, is.Line, is.Column, pointerText(is.Pointer), is.Message)
	}
	if !rep.OK() {
		fmt.Fprintf(stderr, "%s: %d errors\n", path, len(rep.Errors))
		return nil, exitInvalid
	}
	return s, exitOK
}

func pointerText(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// readInput reads a file, or standard input for "-", refusing more than limit bytes.
func readInput(path string, limit int64) ([]byte, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}

const handlerUsage = `usage: j17 handler test spec.json --aggregate TYPE --event EVENT [--id ID]
                        [--state JSON] [--event-data JSON] [--metadata JSON]

Runs the handler of one event type on a state, as the engine does for one event (including
created_at and updated_at), and prints the new state. Without metadata.timestamp the event
gets the current time, as the server stamps it. The event data is checked against the
event's schema first.
`

// cmdHandler runs "j17 handler test".
func cmdHandler(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "test" {
		fmt.Fprint(stderr, handlerUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("handler test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	agg := fs.String("aggregate", "", "aggregate type")
	evType := fs.String("event", "", "event type")
	id := fs.String("id", ident.Global, "aggregate id")
	state := fs.String("state", "{}", "current state (JSON)")
	data := fs.String("event-data", "{}", "event data (JSON)")
	meta := fs.String("metadata", "{}", "event metadata (JSON)")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil || len(pos) != 1 || *agg == "" || *evType == "" {
		if err != nil {
			fmt.Fprintf(stderr, "j17: %v\n", err)
		}
		fmt.Fprint(stderr, handlerUsage)
		return exitUsage
	}
	s, code := loadSpecFile(pos[0], io.Discard, stderr)
	if s == nil {
		return code
	}
	ev, ok := s.Event(*agg, *evType)
	if !ok {
		fmt.Fprintf(stderr, "j17: %s\n", unknownEvent(s, *agg, *evType))
		return exitInvalid
	}
	raw := fmt.Sprintf(`{"key": %q, "type": %q, "data": %s, "metadata": %s}`, *agg+":"+*id, *evType, *data, *meta)
	te, err := tick.ParseEvent([]byte(raw))
	if err != nil {
		fmt.Fprintf(stderr, "j17: --event-data and --metadata must be JSON: %v\n", err)
		return exitInvalid
	}
	if te.Data.Kind() != tick.KindObject {
		fmt.Fprintln(stderr, "j17: --event-data must be a JSON object")
		return exitInvalid
	}
	stampEvent(te, time.Now)
	if ev.Schema != nil {
		if err := ev.Schema.ValidateJSON(te.Data.AppendJSON(nil)); err != nil {
			fmt.Fprintf(stderr, "j17: %v\n", err)
			return exitInvalid
		}
	}
	st, err := tick.ParseJSON([]byte(*state))
	if err != nil {
		fmt.Fprintf(stderr, "j17: --state must be JSON: %v\n", err)
		return exitInvalid
	}
	if ev.Handler != nil {
		if st, err = ev.Handler.Apply(st, te); err != nil {
			fmt.Fprintf(stderr, "j17: handler: %v\n", err)
			return exitInvalid
		}
	}
	return printJSON(stdout, stderr, st.AppendJSON(nil))
}

func unknownEvent(s *spec.Spec, agg, ev string) string {
	a, ok := s.Aggregate(agg)
	if !ok {
		return fmt.Sprintf("unknown aggregate type %q (the spec has %s)", agg, strings.Join(s.AggregateTypes(), ", "))
	}
	return fmt.Sprintf("unknown event type %q for %q (it has %s)", ev, agg, strings.Join(a.EventTypes, ", "))
}

func printJSON(stdout, stderr io.Writer, b []byte) int {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		fmt.Fprintf(stderr, "j17: BUG: state is not JSON: %v\n", err)
		return exitInvalid
	}
	out.WriteByte('\n')
	stdout.Write(out.Bytes())
	return exitOK
}

// parseInterspersed parses flags that may come before, between or after positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

const eventsUsage = `usage: j17 events dry-run [--implication-max-depth N] [--implication-max-total N] spec.json events.jsonl
       j17 events validate spec.json events.json

Each event is {"key": "type:id", "type": "event_type", "data": {...}, "metadata": {...}};
a file holds a JSON array of events or one event per line (NDJSON).
validate checks every event as the write path does and reports each invalid one by index.
dry-run also applies the valid events in order, each as one write of the server: its
implications (emit, map, pipeline) run against the aggregates before it, within max_depth and
max_total (defaults 5 and 100, as j17 serve), every implied event is checked like a write, and
the event applies with all it implies or not at all. It prints the resulting aggregates by key;
the scheduled events and sagas the events would start are listed on standard error, since a dry
run fires no schedule and runs no saga. An event without metadata.timestamp gets the current
time, as the server stamps it. Both exit 1 when an event is invalid.
`

// maxEventsFileBytes bounds an events file read by the events commands.
const maxEventsFileBytes = 256 << 20

// cmdEvents runs "j17 events <subcommand>".
func cmdEvents(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, eventsUsage)
		return exitUsage
	}
	switch args[0] {
	case "validate":
		return eventsRun(args[1:], false, stdout, stderr)
	case "dry-run":
		return eventsRun(args[1:], true, stdout, stderr)
	default:
		fmt.Fprint(stderr, eventsUsage)
		return exitUsage
	}
}

func eventsRun(args []string, apply bool, stdout, stderr io.Writer) int {
	limits := implication.DefaultLimits
	if apply {
		fs := flag.NewFlagSet("events dry-run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.IntVar(&limits.MaxDepth, "implication-max-depth", limits.MaxDepth, "max_depth")
		fs.IntVar(&limits.MaxTotal, "implication-max-total", limits.MaxTotal, "max_total")
		var err error
		if args, err = parseInterspersed(fs, args); err != nil {
			fmt.Fprintf(stderr, "j17: %v\n", err)
			fmt.Fprint(stderr, eventsUsage)
			return exitUsage
		}
		if limits.MaxDepth < 1 || limits.MaxTotal < 1 {
			fmt.Fprintln(stderr, "j17: --implication-max-depth and --implication-max-total must be at least 1")
			return exitUsage
		}
	}
	if len(args) != 2 {
		fmt.Fprint(stderr, eventsUsage)
		return exitUsage
	}
	s, code := loadSpecFile(args[0], io.Discard, stderr)
	if s == nil {
		return code
	}
	raw, err := readInput(args[1], maxEventsFileBytes)
	if err != nil {
		fmt.Fprintf(stderr, "j17: %v\n", err)
		return exitInvalid
	}
	items, err := splitEvents(raw)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", args[1], err)
		return exitInvalid
	}
	rules := ident.NewRules(s.Singletons())
	run := newDryRun(s, rules, limits, stderr)
	invalid := 0
	for i, it := range items {
		where := fmt.Sprintf("%s: event %d", args[1], i)
		if it.line > 0 {
			where = fmt.Sprintf("%s:%d: event %d", args[1], it.line, i)
		}
		ev, key, err := checkEvent(s, rules, it.raw)
		if err == nil && apply {
			err = run.apply(where, key, ev, it.raw)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", where, err)
			invalid++
		}
	}
	if apply {
		if code := printAggregates(stdout, stderr, run.states); code != exitOK {
			return code
		}
	}
	if invalid > 0 {
		fmt.Fprintf(stderr, "%s: %d of %d events invalid\n", args[1], invalid, len(items))
		return exitInvalid
	}
	if !apply {
		fmt.Fprintf(stdout, "%s: %d events valid\n", args[1], len(items))
	}
	return exitOK
}

type eventItem struct {
	raw  []byte
	line int // 1-based line in an NDJSON file; 0 in a JSON array
}

// splitEvents reads a JSON array of events or NDJSON (blank lines skipped).
func splitEvents(raw []byte) ([]eventItem, error) {
	trimmed := bytes.TrimSpace(raw)
	if bytes.HasPrefix(trimmed, []byte("[")) {
		var list []json.RawMessage
		if err := json.Unmarshal(trimmed, &list); err != nil {
			return nil, fmt.Errorf("not a JSON array of events: %w", err)
		}
		out := make([]eventItem, len(list))
		for i, r := range list {
			out[i] = eventItem{raw: r}
		}
		return out, nil
	}
	var out []eventItem
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		out = append(out, eventItem{raw: line, line: i + 1})
	}
	return out, nil
}

// fileEvent is one line of an events file.
type fileEvent struct {
	Key      *string         `json:"key"`
	Type     *string         `json:"type"`
	Data     json.RawMessage `json:"data"`
	Metadata *struct {
		Actor  *actorRef `json:"actor"`
		Target *actorRef `json:"target"`
	} `json:"metadata"`
}

type actorRef struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

var errEvent = errors.New("invalid event")

// checkEvent applies the checks of the write path: a known aggregate and event type (not a
// reserved one), a valid key id, data that is an object and satisfies the schema, an actor of
// a declared agent type with a valid id, and a declared target type.
func checkEvent(s *spec.Spec, rules ident.Rules, raw []byte) (*spec.Event, string, error) {
	var fe fileEvent
	if err := json.Unmarshal(raw, &fe); err != nil {
		return nil, "", fmt.Errorf("%w: not a JSON event object: %v", errEvent, err)
	}
	if fe.Key == nil || fe.Type == nil {
		return nil, "", fmt.Errorf("%w: \"key\" (\"type:id\") and \"type\" are required", errEvent)
	}
	agg, id, ok := strings.Cut(*fe.Key, ":")
	if !ok {
		return nil, "", fmt.Errorf("%w: key %q must be \"type:id\"", errEvent, *fe.Key)
	}
	ev, ok := s.Event(agg, *fe.Type)
	if !ok {
		return nil, "", fmt.Errorf("%w: %s", errEvent, unknownEvent(s, agg, *fe.Type))
	}
	if ev.Reserved {
		return nil, "", fmt.Errorf("%w: event type %q is reserved for the system and cannot be written", errEvent, *fe.Type)
	}
	canon, _, err := rules.Normalize(ident.Key, id)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", errEvent, err)
	}
	if len(bytes.TrimSpace(fe.Data)) == 0 || bytes.TrimSpace(fe.Data)[0] != '{' {
		return nil, "", fmt.Errorf("%w: \"data\" must be a JSON object", errEvent)
	}
	if fe.Metadata == nil || fe.Metadata.Actor == nil || fe.Metadata.Actor.Type == "" {
		return nil, "", fmt.Errorf("%w: metadata.actor with a type and an id is required", errEvent)
	}
	actor := fe.Metadata.Actor
	if !ident.IsSystemActorType(actor.Type) && !s.IsAgentType(actor.Type) {
		return nil, "", fmt.Errorf("%w: metadata.actor.type %q is not in agent_types (%s)", errEvent, actor.Type, strings.Join(s.AgentTypes(), ", "))
	}
	if _, _, err := rules.NormalizeActor(actor.Type, actor.ID); err != nil {
		return nil, "", fmt.Errorf("%w: %v", errEvent, err)
	}
	if t := fe.Metadata.Target; t != nil {
		if !s.IsTargetType(t.Type) {
			return nil, "", fmt.Errorf("%w: metadata.target.type %q is not in target_types", errEvent, t.Type)
		}
		if _, _, err := rules.Normalize(ident.TargetID, t.ID); err != nil {
			return nil, "", fmt.Errorf("%w: %v", errEvent, err)
		}
	}
	if err := ev.Schema.ValidateJSON(fe.Data); err != nil {
		return nil, "", fmt.Errorf("%w: %v", errEvent, err)
	}
	return ev, agg + ":" + canon, nil
}

// stampEvent gives an event without metadata.timestamp the current time, as the server does
// when it accepts a write.
func stampEvent(te *tick.Event, now func() time.Time) {
	if _, ok := te.Timestamp(); ok {
		return
	}
	members := append(append([]tick.Member(nil), te.Metadata.Members()...), tick.Member{Key: "timestamp", Value: tick.Number(float64(now().Unix()))})
	te.Metadata = tick.Object(members...)
}

func printAggregates(stdout, stderr io.Writer, states map[string]tick.Value) int {
	keys := make([]string, 0, len(states))
	for k := range states {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	members := make([]tick.Member, len(keys))
	for i, k := range keys {
		members[i] = tick.Member{Key: k, Value: states[k]}
	}
	return printJSON(stdout, stderr, tick.Object(members...).AppendJSON(nil))
}
