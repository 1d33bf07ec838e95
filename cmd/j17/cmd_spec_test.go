package main

import (
	"bytes"
	"strings"
	"testing"
)

const uuid1 = "a0000000-0000-4000-a000-000000000001"

func TestSpecCommands(t *testing.T) {
	cases := []struct {
		name       string
		run        func(args []string, stdout, stderr *bytes.Buffer) int
		args       []string
		code       int
		stdout     []string // lines stdout must contain, in order
		stderr     []string // substrings stderr must contain
		stdoutOnly bool     // stdout must be exactly the lines given
	}{
		{
			name: "validate ok", run: specCmd, args: []string{"validate", "testdata/spec/order.json"},
			stdout: []string{"testdata/spec/order.json: ok (1 aggregate types, 6 event types)"}, stdoutOnly: true,
		},
		{
			name: "validate errors", run: specCmd, args: []string{"validate", "testdata/spec/invalid.json"}, code: 1,
			stdout: []string{
				`testdata/spec/invalid.json:5:68: /aggregate_types/user/events/was_created/handler/0/sett: unknown operation "sett"`,
				`testdata/spec/invalid.json:9:19: /agent_types/0: agent type "system_user" uses the reserved prefix "system_"; rename it`,
			},
			stderr: []string{"2 errors"},
		},
		{
			name: "validate warnings", run: specCmd, args: []string{"validate", "testdata/spec/warnings.json"},
			stdout: []string{
				`testdata/spec/warnings.json:4:18: /spec/singletons/0: warning: singleton "global" is implicit; remove it`,
				`testdata/spec/warnings.json:5:15: /spec/modules/cache: warning: modules.cache is deprecated`,
				`testdata/spec/warnings.json: ok (1 aggregate types, 1 event types)`,
			},
		},
		{name: "spec unknown subcommand", run: specCmd, args: []string{"check", "x.json"}, code: 2, stderr: []string{"usage: j17 spec validate"}},
		{name: "spec no arguments", run: specCmd, code: 2, stderr: []string{"usage: j17 spec validate"}},
		{name: "validate missing file", run: specCmd, args: []string{"validate", "testdata/spec/nope.json"}, code: 1, stderr: []string{"nope.json"}},
		{
			name: "handler test", run: handler,
			args: []string{"test", "testdata/spec/order.json", "--aggregate", "order", "--event", "had_note_added",
				"--state", `{"status": "pending", "created_at": 1710000000}`, "--event-data", `{"text": "Rush delivery requested"}`,
				"--metadata", `{"actor": {"type": "user", "id": "op_123"}, "timestamp": 1710000060}`},
			stdout: []string{`  "status": "pending",`, `  "created_at": 1710000000,`, `  "notes": [`, `      "text": "Rush delivery requested",`,
				`      "added_at": 1710000060,`, `      "author": "op_123"`, `  "updated_at": 1710000060`},
		},
		{
			name: "handler test flags first", run: handler,
			args: []string{"test", "--aggregate", "order", "--event", "had_status_changed", "--event-data", `{"status": "shipped"}`,
				"--metadata", `{"timestamp": 5}`, "testdata/spec/order.json"},
			stdout: []string{`  "status": "shipped",`, `  "shipped_at": 5,`, `  "created_at": 5,`, `  "updated_at": 5`},
		},
		{
			name: "handler test schema failure", run: handler,
			args: []string{"test", "testdata/spec/order.json", "--aggregate", "order", "--event", "had_status_changed", "--event-data", `{"status": "lost"}`},
			code: 1, stderr: []string{"Event data failed schema validation at data.status"},
		},
		{
			name: "handler test unknown event", run: handler,
			args: []string{"test", "testdata/spec/order.json", "--aggregate", "order", "--event", "was_lost"},
			code: 1, stderr: []string{`unknown event type "was_lost" for "order"`},
		},
		{
			name: "handler test stamps the time", run: handler,
			args: []string{"test", "testdata/spec/order.json", "--aggregate", "order", "--event", "was_placed",
				"--event-data", `{"customer_id": "c1", "items": []}`, "--metadata", `{"actor": {"type": "user", "id": "u"}}`},
			stdout: []string{`  "customer_id": "c1",`, `  "status": "pending",`, `  "placed_at": `, `  "created_at": `, `  "updated_at": `},
		},
		{name: "handler missing flags", run: handler, args: []string{"test", "testdata/spec/order.json"}, code: 2, stderr: []string{"usage: j17 handler test"}},
		{name: "handler unknown subcommand", run: handler, args: []string{"run"}, code: 2, stderr: []string{"usage: j17 handler test"}},
		{
			name: "events validate", run: events, args: []string{"validate", "testdata/spec/order.json", "testdata/spec/events.jsonl"},
			stdout: []string{"testdata/spec/events.jsonl: 3 events valid"}, stdoutOnly: true,
		},
		{
			name: "events validate invalid", run: events, args: []string{"validate", "testdata/spec/order.json", "testdata/spec/events_mixed.json"},
			code: 1,
			stderr: []string{
				"event 1: invalid event: Event data failed schema validation at data.customer_id",
				`event 2: invalid event: unknown aggregate type "invoice"`,
				`event 3: invalid event: unknown event type "was_shipped" for "order"`,
				"event 4: invalid event:",
				"event 5: invalid event: metadata.actor with a type and an id is required",
				`event 6: invalid event: metadata.actor.type "robot" is not in agent_types (user, webhook)`,
				`event 7: invalid event: event type "_was_tombstoned" is reserved`,
				`event 9: invalid event: metadata.target.type "supplier" is not in target_types`,
				`event 10: invalid event: "data" must be a JSON object`,
				"9 of 11 events invalid",
			},
		},
		{
			name: "events dry-run", run: events, args: []string{"dry-run", "testdata/spec/order.json", "testdata/spec/events.jsonl"},
			stdout: []string{
				`  "order:` + uuid1 + `": {`, `    "customer_id": "cust_001",`, `    "status": "pending",`,
				`    "created_at": 1710000000,`, `    "updated_at": 1710000060,`,
				`        "text": "Rush delivery requested",`, `        "author": "` + uuid1 + `"`,
				`  "order:twilio_webhook": {`, `    "status": "shipped",`,
			},
		},
		{
			name: "events dry-run invalid", run: events, args: []string{"dry-run", "testdata/spec/order.json", "testdata/spec/events_mixed.json"},
			code: 1, stdout: []string{`  "order:` + uuid1 + `": {`}, stderr: []string{"9 of 11 events invalid"},
		},
		{name: "events unknown subcommand", run: events, args: []string{"replay"}, code: 2, stderr: []string{"usage: j17 events dry-run"}},
		{name: "events no arguments", run: events, code: 2, stderr: []string{"usage: j17 events dry-run"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := c.run(c.args, &stdout, &stderr)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout.String(), stderr.String())
			}
			out := stdout.String()
			if c.stdoutOnly && strings.TrimSpace(out) != strings.Join(c.stdout, "\n") {
				t.Errorf("stdout:\n%s\nwant exactly:\n%s", out, strings.Join(c.stdout, "\n"))
			}
			rest := out
			for _, want := range c.stdout {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Errorf("stdout lacks (in order) %q\nstdout:\n%s", want, out)
					break
				}
				rest = rest[i+len(want):]
			}
			for _, want := range c.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q\nstderr:\n%s", want, stderr.String())
				}
			}
		})
	}
}

func specCmd(args []string, stdout, stderr *bytes.Buffer) int { return cmdSpec(args, stdout, stderr) }
func handler(args []string, stdout, stderr *bytes.Buffer) int {
	return cmdHandler(args, stdout, stderr)
}
func events(args []string, stdout, stderr *bytes.Buffer) int { return cmdEvents(args, stdout, stderr) }
