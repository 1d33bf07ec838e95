package spec

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// checker walks the node tree of one upload and records problems in a reporter. Its helpers
// report a problem and return false (or nil) so that callers skip the checks that depend on it,
// and keep checking everything else.
type checker struct {
	r *reporter
}

func (c *checker) errorf(ptr string, off int, format string, args ...any) {
	c.r.errorf(ptr, off, format, args...)
}

func (c *checker) warnf(ptr string, off int, format string, args ...any) {
	c.r.warnf(ptr, off, format, args...)
}

// want reports n (at ptr) unless it has kind k; what describes the value for the message.
func (c *checker) want(n *node, ptr string, k kind, what string) bool {
	if n.kind == k {
		return true
	}
	c.errorf(ptr, n.start, "%s must be %s, not %s", what, k, n.kind)
	return false
}

// object checks that n is an object whose keys are all in allowed, reporting each unknown key
// at the key itself with the closest allowed key as a suggestion.
func (c *checker) object(n *node, ptr, what string, allowed ...string) bool {
	if !c.want(n, ptr, kindObject, what) {
		return false
	}
	for _, m := range n.members {
		if !contains(allowed, m.key) {
			c.unknownKey(ptr, m, what, allowed)
		}
	}
	return true
}

func (c *checker) unknownKey(ptr string, m member, what string, allowed []string) {
	p := ptr + "/" + escapePointer(m.key)
	if s := suggest(m.key, allowed); s != "" {
		c.errorf(p, m.keyAt, "unknown key %q in %s; did you mean %q?", m.key, what, s)
		return
	}
	sorted := append([]string(nil), allowed...)
	sort.Strings(sorted)
	c.errorf(p, m.keyAt, "unknown key %q in %s; remove it (allowed keys: %s)", m.key, what, strings.Join(sorted, ", "))
}

// required returns the member key of object n, reporting it as missing when absent.
func (c *checker) required(n *node, ptr, key, what string) *node {
	v := n.get(key)
	if v == nil {
		if hint, ok := keyHints[key]; ok {
			c.errorf(ptr, n.start, "%s is missing the required key %q: add %s", what, key, hint)
		} else {
			c.errorf(ptr, n.start, "%s is missing the required key %q; add it", what, key)
		}
	}
	return v
}

// keyHints says what to add for a missing required key.
var keyHints = map[string]string{
	"aggregate_types": `an object of aggregate types, e.g. {"user": {"events": {...}}}`,
	"agent_types":     `the actor types that may write events, e.g. ["user"]`,
	"events":          `an object of event types, e.g. {"was_created": {"schema": {...}, "handler": [...]}}`,
	"aggregate_type":  `the aggregate type, as declared in aggregate_types`,
	"event_type":      `the event type, as declared on that aggregate type`,
	"id":              `the aggregate id: a literal id or a path such as "$.data.user_id"`,
	"emit":            `{"aggregate_type": ..., "id": ..., "event_type": ..., "data": {...}}`,
	"for_each":        `the aggregate type the projection follows, e.g. "order"`,
	"sources":         `an object of named sources, e.g. {"order": "$key"}`,
	"select":          `an object giving the output shape, e.g. {"total": "$.order.total"}`,
	"trigger":         `{"aggregate_type": ..., "event_type": ...}`,
	"steps":           `an array of steps, each {"name": ..., "emit": {...}}`,
	"name":            `a name unique within the saga`,
	"blob_name":       `the name of the uploaded WASM blob`,
	"in":              `the path of the array to go over, e.g. "$.data.items"`,
	"as":              `the item's binding name, e.g. "$item"`,
	"path":            `the path of the value, e.g. "$.data.location"`,
	"event_types":     `the event types to wait for, e.g. ["was_reserved"]`,
	"image":           `the container image reference`,
	"runtime":         `one of "node", "elixir", "ruby", "python"`,
	"entrypoint":      `the path of the handler file`,
	"to":              `the output shape for each element`,
	"where":           `the field to match, e.g. {"id": "$item.product_id"}`,
}

// str returns the string value of n, reporting any other kind.
func (c *checker) str(n *node, ptr, what string) (string, bool) {
	if !c.want(n, ptr, kindString, what) {
		return "", false
	}
	return n.str, true
}

// nonEmptyString is str that also refuses "".
func (c *checker) nonEmptyString(n *node, ptr, what string) (string, bool) {
	s, ok := c.str(n, ptr, what)
	if ok && s == "" {
		c.errorf(ptr, n.start, "%s must not be empty", what)
		return "", false
	}
	return s, ok
}

// boolean returns the value of a JSON boolean.
func (c *checker) boolean(n *node, ptr, what string) (bool, bool) {
	if !c.want(n, ptr, kindBool, what) {
		return false, false
	}
	return n.boolean, true
}

// integer returns n as an int64 within [lo, hi].
func (c *checker) integer(n *node, ptr, what string, lo, hi int64) (int64, bool) {
	if !c.want(n, ptr, kindNumber, what) {
		return 0, false
	}
	v, err := strconv.ParseInt(n.str, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(n.str, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			c.errorf(ptr, n.start, "%s must be a whole number, not %s", what, n.str)
			return 0, false
		}
		v = int64(f)
	}
	if v < lo || v > hi {
		c.errorf(ptr, n.start, "%s must be between %d and %d, not %d", what, lo, hi, v)
		return 0, false
	}
	return v, true
}

// stringList returns the strings of an array node, reporting non-strings, empty strings and
// repeated entries.
func (c *checker) stringList(n *node, ptr, what string) ([]string, bool) {
	if !c.want(n, ptr, kindArray, what) {
		return nil, false
	}
	out := make([]string, 0, len(n.elems))
	ok := true
	for i, e := range n.elems {
		p := ptr + "/" + strconv.Itoa(i)
		s, good := c.nonEmptyString(e, p, "each entry of "+what)
		if !good {
			ok = false
			continue
		}
		if contains(out, s) {
			c.errorf(p, e.start, "%s lists %q twice; remove the repeated entry", what, s)
			ok = false
			continue
		}
		out = append(out, s)
	}
	return out, ok
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// suggest returns the entry of options closest to s when it is a likely typo.
func suggest(s string, options []string) string {
	best, bestD := "", 3
	for _, o := range options {
		if d := editDistance(s, o); d < bestD {
			best, bestD = o, d
		}
	}
	if bestD > len(s)/2 {
		return ""
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// validName reports whether s is usable as an aggregate, event, agent or projection name:
// letters, digits, '_' and '-', at most maxNameLen bytes. Names appear in URLs and in stream
// keys "type:id", so ':' and '/' are excluded.
func validName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

const maxNameLen = 128

func join(ptr, key string) string { return ptr + "/" + escapePointer(key) }

func index(ptr string, i int) string { return ptr + "/" + strconv.Itoa(i) }

func quote(s string) string { return strconv.Quote(s) }

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
