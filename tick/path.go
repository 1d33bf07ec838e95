package tick

import (
	"fmt"
	"strconv"
	"strings"
)

type rootKind uint8

const (
	rootEvent rootKind = iota
	rootState
	rootBinding
	rootPrev
	rootContext
	rootError
)

// eventField is the first member of "$" resolved when the path is compiled.
type eventField uint8

const (
	evWhole eventField = iota
	evData
	evMetadata
	evKey
	evID
	evType
	evState
	evExtra
)

var eventFields = map[string]eventField{
	"data": evData, "metadata": evMetadata, "key": evKey, "id": evID, "type": evType, "state": evState,
}

type segKind uint8

const (
	segField segKind = iota
	segIndex
	segEntries
	segWildcard
)

type segment struct {
	kind  segKind
	name  string
	index int
}

// Path is a compiled JSONPath of the j17 subset: "$" (the event), "@" (the
// state) or "$name" (a binding), then ".field", "[index]" (negative counts
// from the end), ".$entries", optionally "[*]" (projection sources only),
// and a final "?" for optional.
type Path struct {
	src      string
	root     rootKind
	name     string
	field    eventField
	segs     []segment
	optional bool
	fast     fastPath
}

// fastPath marks the paths that handlers use most, resolved without the
// general walk.
type fastPath uint8

const (
	fastNone      fastPath = iota
	fastData               // "$.data"
	fastFields             // "$.data.x", "$.metadata.x.y": fields alone
	fastTimestamp          // "$.metadata.timestamp", which Scope may have cached
)

// ParsePath compiles a JSONPath. Bindings of any name are accepted; the
// wildcard "[*]" is not (see ParseSourcePath).
func ParsePath(s string) (Path, error) {
	p, msg := parsePath(s, false)
	if msg != "" {
		return Path{}, &Error{Message: msg, Err: ErrInvalid}
	}
	return p, nil
}

// ParseSourcePath compiles a projection source id path, the one place where
// the "[*]" wildcard is allowed.
func ParseSourcePath(s string) (Path, error) {
	p, msg := parsePath(s, true)
	if msg != "" {
		return Path{}, &Error{Message: msg, Err: ErrInvalid}
	}
	return p, nil
}

// String returns the source text.
func (p Path) String() string { return p.src }

// Optional reports whether the path ends in "?".
func (p Path) Optional() bool { return p.optional }

// Binding returns the binding name ("$item", "$prev", ...) the path starts
// from, or "" for "$" and "@" paths.
func (p Path) Binding() string {
	switch p.root {
	case rootBinding:
		return p.name
	case rootPrev:
		return "$prev"
	case rootContext:
		return "$context"
	case rootError:
		return "$error"
	}
	return ""
}

// IsState reports whether the path reads the state ("@..." or "$.state...").
func (p Path) IsState() bool {
	return p.root == rootState || (p.root == rootEvent && p.field == evState)
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdent(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// looksLikePath tells a path from a literal string in handler values and
// templates: any string starting with "$", and "@" alone or followed by
// ".", "[" or "?".
func looksLikePath(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '$' {
		return true
	}
	return s[0] == '@' && (len(s) == 1 || s[1] == '.' || s[1] == '[' || s[1] == '?')
}

func parsePath(s string, wildcard bool) (Path, string) {
	p := Path{src: s}
	if s == "" {
		return p, "empty path"
	}
	rest := s
	if strings.HasSuffix(rest, "?") {
		p.optional = true
		rest = rest[:len(rest)-1]
	}
	switch {
	case rest == "$" || strings.HasPrefix(rest, "$.") || strings.HasPrefix(rest, "$["):
		p.root = rootEvent
		rest = rest[1:]
	case rest == "@" || strings.HasPrefix(rest, "@.") || strings.HasPrefix(rest, "@["):
		p.root = rootState
		rest = rest[1:]
	case len(rest) > 1 && rest[0] == '$' && isIdentStart(rest[1]):
		i := 2
		for i < len(rest) && isIdent(rest[i]) {
			i++
		}
		p.name = rest[:i]
		switch p.name {
		case "$prev":
			p.root = rootPrev
		case "$context":
			p.root = rootContext
		case "$error":
			p.root = rootError
		default:
			p.root = rootBinding
		}
		rest = rest[i:]
		if rest != "" && rest[0] != '.' && rest[0] != '[' {
			return p, fmt.Sprintf("invalid JSONPath %q: unexpected %q after %s", s, rest[0], p.name)
		}
	default:
		return p, fmt.Sprintf("invalid JSONPath %q: must start with \"$\", \"@\" or a $binding", s)
	}
	for rest != "" {
		var seg segment
		var msg string
		seg, rest, msg = parseSegment(s, rest, wildcard)
		if msg != "" {
			return p, msg
		}
		p.segs = append(p.segs, seg)
	}
	if p.root == rootEvent && len(p.segs) > 0 && p.segs[0].kind == segField {
		f, ok := eventFields[p.segs[0].name]
		if !ok {
			f = evExtra
		}
		p.field = f
		fields := len(p.segs) > 1
		for _, sg := range p.segs[1:] {
			fields = fields && sg.kind == segField
		}
		switch {
		case f == evData && len(p.segs) == 1:
			p.fast = fastData
		case f == evMetadata && len(p.segs) == 2 && fields && p.segs[1].name == "timestamp":
			p.fast = fastTimestamp
		case (f == evData || f == evMetadata) && fields:
			p.fast = fastFields
		}
	}
	return p, ""
}

func parseSegment(src, rest string, wildcard bool) (segment, string, string) {
	bad := func(why string) (segment, string, string) {
		return segment{}, "", fmt.Sprintf("invalid JSONPath %q: %s", src, why)
	}
	switch rest[0] {
	case '.':
		rest = rest[1:]
		if rest == "" {
			return bad("ends with \".\"")
		}
		switch rest[0] {
		case '.':
			return bad("recursive descent (..) is not supported; use explicit nested paths")
		case '*':
			return bad("wildcard (.*) is not supported; use explicit paths or map")
		case '[':
			return bad("\".\" must be followed by a field name")
		}
		i := 0
		for i < len(rest) && rest[i] != '.' && rest[i] != '[' {
			switch c := rest[i]; c {
			case ']', '?', '*', '"', '\'', ' ', '\t', '\n', '\r':
				return bad(fmt.Sprintf("unexpected %q in a field name", c))
			}
			i++
		}
		name := rest[:i]
		if name == "$entries" {
			return segment{kind: segEntries}, rest[i:], ""
		}
		return segment{kind: segField, name: name}, rest[i:], ""
	case '[':
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return bad("unclosed \"[\"")
		}
		inner := rest[1:end]
		switch {
		case inner == "*":
			if !wildcard {
				return bad("the [*] wildcard is allowed only in projection source id paths; use map")
			}
			return segment{kind: segWildcard}, rest[end+1:], ""
		case strings.HasPrefix(inner, "?"):
			return bad("filter expressions are not supported; use the filter operation")
		case strings.HasPrefix(inner, "("):
			return bad("script expressions are not supported; use [-1] for the last element")
		case strings.HasPrefix(inner, "\"") || strings.HasPrefix(inner, "'"):
			return bad("bracket notation for fields is not supported; use dot notation")
		case strings.Contains(inner, ":"):
			return bad("slices are not supported; use individual indices")
		case strings.Contains(inner, ","):
			return bad("unions are not supported; use individual indices")
		}
		digits := strings.TrimPrefix(inner, "-")
		if digits == "" || len(digits) > 9 || strings.Trim(digits, "0123456789") != "" {
			return bad(fmt.Sprintf("invalid index [%s]", inner))
		}
		n, _ := strconv.Atoi(inner)
		return segment{kind: segIndex, index: n}, rest[end+1:], ""
	}
	return bad(fmt.Sprintf("unexpected %q", rest[0]))
}

// Resolve evaluates the path in a scope. The missing Value means not found;
// whether that is an error is the caller's decision (see Optional).
func (p *Path) Resolve(s *Scope) Value {
	if p.fast != fastNone && s.Event != nil {
		switch p.fast {
		case fastData:
			return s.Event.Data
		case fastFields:
			v := &s.Event.Data
			if p.field == evMetadata {
				v = &s.Event.Metadata
			}
			// Members are looked up where they lie and only the result
			// is copied out; the loops are written out here because a
			// call per segment was a good part of the cost of a lookup.
			for i := 1; i < len(p.segs); i++ {
				if v.kind != KindObject {
					return Value{}
				}
				ms := v.n.members
				if lz := v.n.lz; lz != nil {
					f := lz.full.Load()
					if f == nil {
						// Still text: read the rest of the path from it.
						w, rest := walkRaw(*v, p.segs[i:])
						if len(rest) == 0 {
							return w
						}
						return walk(w, rest)
					}
					ms = f.members
				}
				key := p.segs[i].name
				v = nil
				for j := range ms {
					if sameString(ms[j].Key, key) {
						v = &ms[j].Value
						break
					}
				}
				if v == nil {
					return Value{}
				}
			}
			return *v
		case fastTimestamp:
			return s.timestamp()
		}
	}
	return p.resolve(s)
}

// resolve is Resolve by the general walk.
func (p *Path) resolve(s *Scope) Value {
	var v Value
	segs := p.segs
	switch p.root {
	case rootState:
		v = s.State
	case rootBinding:
		v = s.lookup(p.name)
	case rootPrev:
		v = s.Prev
	case rootContext:
		v = s.Context
	case rootError:
		v = s.Error
	default:
		ev := s.Event
		if ev == nil {
			ev = &Event{}
		}
		if p.field != evWhole {
			segs = segs[1:]
		}
		switch p.field {
		case evWhole:
			v = ev.Value()
			if s.Extra.kind == KindObject {
				n := v.n
				for _, m := range s.Extra.n.m().members {
					if n.find(m.Key) < 0 {
						n.members = append(n.members, m)
					}
				}
			}
		case evData:
			v = ev.Data
		case evMetadata:
			v = ev.Metadata
		case evKey:
			v = String(ev.Key)
		case evID:
			v = String(ev.ID)
		case evType:
			v = String(ev.Type)
		case evState:
			v = s.State
			if s.hasBefore {
				v = s.before
			}
		case evExtra:
			v = s.Extra.Get(p.segs[0].name)
		}
	}
	return walk(v, segs)
}

// ResolveIn evaluates the path with "$" standing for doc, as projection
// source paths do. With "[*]" the result is an array of every match.
func (p *Path) ResolveIn(doc Value) Value {
	switch p.root {
	case rootEvent:
		return walk(doc, p.segs)
	case rootState:
		return walk(doc, p.segs)
	}
	return Value{}
}

func walk(v Value, segs []segment) Value {
	for i := 0; i < len(segs); i++ {
		sg := segs[i]
		if v.kind == KindMissing {
			return v
		}
		switch sg.kind {
		case segField:
			if v.kind == KindObject && v.n.lz != nil && v.n.lz.full.Load() == nil {
				var rest []segment
				v, rest = walkRaw(v, segs[i:])
				i = len(segs) - len(rest) - 1
				continue
			}
			v = v.Get(sg.name)
		case segIndex:
			v = v.Index(sg.index)
		case segEntries:
			v = entries(v)
		case segWildcard:
			if v.kind != KindArray {
				return Value{}
			}
			out := make([]Value, 0, len(v.n.m().items))
			for _, it := range v.n.m().items {
				if r := walk(it, segs[i+1:]); r.kind != KindMissing {
					out = append(out, r)
				}
			}
			return Value{kind: KindArray, n: &node{items: out}}
		}
	}
	return v
}

// entries turns an object into [{"key", "value"}, ...]; anything else is null.
func entries(v Value) Value {
	if v.kind != KindObject {
		return Null()
	}
	out := make([]Value, len(v.n.m().members))
	for i, m := range v.n.m().members {
		out[i] = Value{kind: KindObject, n: &node{members: []Member{
			{Key: "key", Value: String(m.Key)},
			{Key: "value", Value: m.Value},
		}}}
	}
	return Value{kind: KindArray, n: &node{items: out}}
}
