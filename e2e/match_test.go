package e2e

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// vars holds the values a case's placeholders stand for. Placeholders are written {{kind:name}}:
//
//	{{uuid:a}}          a fresh lowercase UUID v4, the same for every use of "a" in the case
//	{{UUID:a}}          the same UUID in upper case
//	{{uuid5:a}}         a fresh lowercase UUID v5; {{UUID5:a}} in upper case
//	{{humane:a}}        a fresh canonical humane code holding 1, 0 and V
//	{{humane_messy:a}}  the same code in lower case with l, o and u for 1, 0 and V
//	{{repeat:x:256}}    x repeated 256 times
//	{{instance}}        the instance name
//	{{name}}            a value captured by an earlier step
//
// Expected values may also be one of the matchers: "$any", "$absent", "$string", "$int",
// "$stream_id" (<ms>-<seq>), "$now" (Unix seconds during the request), or {"$exact": value}
// (no fields beyond those given).
type vars struct {
	instance  string
	generated map[string]string
	captured  map[string]any
	window    [2]int64
}

func newVars() *vars {
	return &vars{instance: instanceName, generated: map[string]string{}, captured: map[string]any{}}
}

var placeholder = regexp.MustCompile(`\{\{([^{}]+)\}\}`)

// expand fills the placeholders of every string in v. A string that is one placeholder of a
// captured value becomes that value, whatever its JSON type.
func (v *vars) expand(x any) any {
	switch x := x.(type) {
	case string:
		if m := placeholder.FindStringSubmatch(x); m != nil && m[0] == x {
			if c, ok := v.captured[m[1]]; ok {
				return c
			}
		}
		return v.expandString(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[v.expandString(k)] = v.expand(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = v.expand(e)
		}
		return out
	}
	return x
}

func (v *vars) expandString(s string) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		return v.resolve(m[2 : len(m)-2])
	})
}

func (v *vars) resolve(ph string) string {
	if ph == "instance" {
		return v.instance
	}
	if c, ok := v.captured[ph]; ok {
		if s, ok := c.(string); ok {
			return s
		}
		return fmt.Sprint(c)
	}
	kind, name, _ := strings.Cut(ph, ":")
	switch kind {
	case "uuid", "uuid5", "humane":
		return v.gen(kind, name)
	case "UUID":
		return strings.ToUpper(v.gen("uuid", name))
	case "UUID5":
		return strings.ToUpper(v.gen("uuid5", name))
	case "humane_messy":
		return messyHumane(v.gen("humane", name))
	case "repeat":
		s, n, _ := strings.Cut(name, ":")
		count, err := strconv.Atoi(n)
		if err != nil {
			panic(fmt.Sprintf("BUG: test data: bad repeat placeholder %q", ph))
		}
		return strings.Repeat(s, count)
	}
	panic(fmt.Sprintf("BUG: test data: unknown placeholder {{%s}}", ph))
}

func (v *vars) gen(kind, name string) string {
	key := kind + ":" + name
	if s, ok := v.generated[key]; ok {
		return s
	}
	var s string
	switch kind {
	case "uuid":
		s = newUUID(4)
	case "uuid5":
		s = newUUID(5)
	case "humane":
		s = newHumane()
	}
	v.generated[key] = s
	return s
}

// newUUID returns a random UUID of the given version with the RFC 4122 variant, in lower case.
func newUUID(version byte) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | version<<4
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newHumane returns a random canonical humane code that holds 1, 0 and V, the targets of the
// documented normalization.
func newHumane() string {
	b := []byte("10V")
	for len(b) < 9 {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(crockford))))
		if err != nil {
			panic(err)
		}
		b = append(b, crockford[n.Int64()])
	}
	return string(b)
}

// messyHumane writes a canonical code as a person might type it: lower case, with the letters
// the documentation normalizes (I and L to 1, O to 0, U to V).
func messyHumane(code string) string {
	r := strings.NewReplacer("1", "l", "0", "o", "V", "u")
	return strings.ToLower(r.Replace(code))
}

var streamIDPattern = regexp.MustCompile(`^[0-9]+-[0-9]+$`)

// match compares got with want at path and lists every difference.
func match(path string, got, want any, v *vars) []string {
	if w, ok := want.(map[string]any); ok {
		if exact, ok := w["$exact"]; ok && len(w) == 1 {
			p := match(path, got, exact, v)
			if g, ok := got.(map[string]any); ok {
				if e, ok := v.expand(exact).(map[string]any); ok {
					for _, k := range sortedKeys(g) {
						if _, ok := e[k]; !ok {
							p = append(p, fmt.Sprintf("%s.%s: got %s, want no such field", path, k, show(g[k])))
						}
					}
				}
			}
			return p
		}
	}
	want = v.expand(want)
	switch w := want.(type) {
	case string:
		return matchString(path, got, w, v)
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %s, want an object", path, show(got))}
		}
		var p []string
		for _, k := range sortedKeys(w) {
			gv, present := g[k]
			if w[k] == "$absent" {
				if present {
					p = append(p, fmt.Sprintf("%s.%s: got %s, want absent", path, k, show(gv)))
				}
				continue
			}
			if !present {
				p = append(p, fmt.Sprintf("%s.%s: missing, want %s", path, k, show(w[k])))
				continue
			}
			p = append(p, match(path+"."+k, gv, w[k], v)...)
		}
		return p
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %s, want an array of %d", path, show(got), len(w))}
		}
		if len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %d elements %s, want %d", path, len(g), show(got), len(w))}
		}
		var p []string
		for i := range w {
			p = append(p, match(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], v)...)
		}
		return p
	default:
		if !reflect.DeepEqual(got, want) {
			return []string{fmt.Sprintf("%s: got %s, want %s", path, show(got), show(want))}
		}
	}
	return nil
}

func matchString(path string, got any, w string, v *vars) []string {
	bad := func(what string) []string {
		return []string{fmt.Sprintf("%s: got %s, want %s", path, show(got), what)}
	}
	switch w {
	case "$any":
		return nil
	case "$string":
		if s, ok := got.(string); !ok || s == "" {
			return bad("a non-empty string")
		}
	case "$stream_id":
		if s, ok := got.(string); !ok || !streamIDPattern.MatchString(s) {
			return bad(`a stream id "<unix ms>-<seq>"`)
		}
	case "$int":
		if n, ok := got.(float64); !ok || n != float64(int64(n)) {
			return bad("an integer")
		}
	case "$now":
		n, ok := got.(float64)
		if !ok || int64(n) < v.window[0] || int64(n) > v.window[1] {
			return bad(fmt.Sprintf("Unix seconds between %d and %d", v.window[0], v.window[1]))
		}
	default:
		if s, ok := got.(string); !ok || s != w {
			return bad(show(w))
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func show(x any) string {
	if x == nil {
		return "null"
	}
	if s, ok := x.(string); ok {
		return strconv.Quote(s)
	}
	raw, err := json.Marshal(x)
	b := string(raw)
	if err != nil {
		b = fmt.Sprintf("%v", x)
	}
	if len(b) > 300 {
		b = b[:300] + "..."
	}
	return b
}

// lookup finds a dotted path ("stream_ids.0", "events.1.stream_id") in a decoded JSON value.
func lookup(x any, path string) (any, bool) {
	for _, seg := range strings.Split(path, ".") {
		switch c := x.(type) {
		case map[string]any:
			var ok bool
			if x, ok = c[seg]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			x = c[i]
		default:
			return nil, false
		}
	}
	return x, true
}
