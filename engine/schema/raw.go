package schema

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The raw path answers "is this data valid?" straight from the JSON bytes, for the schemas most
// events have: objects and arrays checked by type, properties, required, additionalProperties,
// prefixItems, items and item counts. A value nothing constrains beyond its type is only
// scanned, never built, so data that a schema barely looks at (an {"type":"object"} event) costs
// a syntax check and no allocation. A value under a node the raw path does not mirror is decoded
// and handed to the fast path, so every schema can take it; it answers true only when the data
// is well-formed JSON and valid. Any other answer is checked again by decoding the whole
// document, which reports the syntax error or the validation failure.
//
// Duplicate keys: every occurrence is validated where the decoder keeps the last one, so data
// whose earlier duplicate fails is refused here and accepted by the decoding path. required only
// needs presence, which duplicates do not change.

// rawShape is what the raw path knows of a node, computed once at compile.
type rawShape struct {
	// typeOnly: for a string, number, boolean or null, the node checks nothing but the type.
	typeOnly bool
	// object and array: the node's keywords for that kind are ones the raw walk mirrors.
	object, array bool
	// keys maps each property and required name to what the walk does with it.
	keys        map[string]rawKey
	requiredAll uint64
}

// rawKey is a member name the node knows: its properties subschema (nil when properties does
// not name it, and additionalProperties applies), and its required bit.
type rawKey struct {
	property *node
	required uint64
}

// maxRawRequired is the longest required list the walk tracks, one bit per name.
const maxRawRequired = 64

// shapeRaw fills n.raw from n's keywords.
func (n *node) shapeRaw() {
	s := n.lib
	if n.slow || s.Bool != nil || s.Const != nil || s.Enum != nil || s.Format != nil ||
		n.ref != nil || n.not != nil || n.ifN != nil || len(n.allOf)+len(n.anyOf)+len(n.oneOf) > 0 {
		return
	}
	n.raw.typeOnly = s.MinLength == nil && s.MaxLength == nil && s.Pattern == nil &&
		n.minimum == nil && n.maximum == nil && n.exclMinimum == nil && n.exclMaximum == nil && s.MultipleOf == nil
	n.raw.array = !s.UniqueItems && n.contains == nil
	required := map[string]uint64{}
	for _, name := range s.Required {
		if _, ok := required[name]; !ok {
			required[name] = 1 << len(required)
		}
	}
	if s.MinProperties != nil || s.MaxProperties != nil || n.propertyNames != nil || len(n.patternProperties) > 0 ||
		len(s.DependentRequired) > 0 || len(n.dependentSchemas) > 0 || len(required) > maxRawRequired {
		return
	}
	n.raw.object = true
	n.raw.keys = make(map[string]rawKey, len(n.properties)+len(required))
	for name, p := range n.properties {
		n.raw.keys[name] = rawKey{property: p}
	}
	for name, bit := range required {
		k := n.raw.keys[name]
		k.required = bit
		n.raw.keys[name] = k
		n.raw.requiredAll |= bit
	}
}

// acceptsEveryObject reports whether rawObject accepts every well-formed object: the raw walk
// mirrors an object node exactly (shapeRaw), and with no member it knows, none required, and
// nothing said of the others, it checks nothing but the syntax. A nil node (no fast path) knows
// of no such thing.
func (n *node) acceptsEveryObject() bool {
	switch {
	case n == nil || n.slow:
		return false
	case n.lib.Bool != nil:
		return *n.lib.Bool
	}
	return n.raw.object && (n.types == 0 || n.types&typeObject != 0) && len(n.raw.keys) == 0 &&
		!n.additionalFalse && n.additional == nil
}

// validRaw reports whether raw is one JSON value that satisfies the schema. false means invalid
// or not known.
func (s *Schema) validRaw(raw []byte) bool {
	p := jsonParser{src: raw, keys: s.keys}
	p.skipSpace()
	if !s.fast.rawValid(&p) {
		return false
	}
	p.skipSpace()
	return p.pos == len(p.src)
}

// rawValid reports whether the value at p.pos satisfies n and moves past it.
func (n *node) rawValid(p *jsonParser) bool {
	if p.pos >= len(p.src) {
		return false
	}
	c := p.src[p.pos]
	switch {
	case n.slow:
	case n.lib.Bool != nil:
		return *n.lib.Bool && p.skip()
	case c == '{' && n.raw.object:
		return (n.types == 0 || n.types&typeObject != 0) && n.rawObject(p)
	case c == '[' && n.raw.array:
		return (n.types == 0 || n.types&typeArray != 0) && n.rawArray(p)
	case c != '{' && c != '[' && n.raw.typeOnly:
		return n.rawScalarType(p)
	}
	v, err := p.value()
	return err == nil && n.valid(v)
}

// rawScalarType checks the type of the scalar at p.pos, all that a typeOnly node asks of it.
func (n *node) rawScalarType(p *jsonParser) bool {
	start := p.pos
	var t uint8
	switch p.src[p.pos] {
	case '"':
		t = typeString
	case 't', 'f':
		t = typeBoolean
	case 'n':
		t = typeNull
	default:
		t = typeNumber
	}
	if !p.skip() {
		return false
	}
	if n.types == 0 || n.types&t != 0 {
		return true
	}
	if t != typeNumber || n.types&typeInteger == 0 {
		return false
	}
	text := p.src[start:p.pos]
	return !bytes.ContainsAny(text, ".eE") || isIntegral(json.Number(text))
}

func (n *node) rawObject(p *jsonParser) bool {
	if p.enter() != nil {
		return false
	}
	var seen uint64
	if p.closes('}') {
		return n.raw.requiredAll == 0
	}
	for {
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return false
		}
		k, ok := n.rawMember(p)
		if !ok {
			return false
		}
		seen |= k.required
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return false
		}
		p.pos++
		p.skipSpace()
		sub := k.property
		if sub == nil {
			if n.additionalFalse {
				return false
			}
			sub = n.additional
		}
		if sub == nil && !p.skip() || sub != nil && !sub.rawValid(p) {
			return false
		}
		if more, ok := p.next('}'); !more {
			return ok && seen&n.raw.requiredAll == n.raw.requiredAll
		}
	}
}

// rawMember reads the member name at p.pos and looks it up. A plain ASCII name is looked up in
// place, any other is decoded first.
func (n *node) rawMember(p *jsonParser) (rawKey, bool) {
	start := p.pos + 1
	for i := start; i < len(p.src); i++ {
		c := p.src[i]
		if c == '"' {
			p.pos = i + 1
			return n.raw.keys[string(p.src[start:i])], true
		}
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			break
		}
	}
	name, err := p.str()
	if err != nil {
		return rawKey{}, false
	}
	return n.raw.keys[name], true
}

func (n *node) rawArray(p *jsonParser) bool {
	if p.enter() != nil {
		return false
	}
	s := n.lib
	count := 0
	if !p.closes(']') {
		for {
			sub := n.items
			if count < len(n.prefixItems) {
				sub = n.prefixItems[count]
			}
			if sub == nil && !p.skip() || sub != nil && !sub.rawValid(p) {
				return false
			}
			count++
			more, ok := p.next(']')
			if !ok {
				return false
			}
			if !more {
				break
			}
		}
	}
	return (s.MinItems == nil || count >= *s.MinItems) && (s.MaxItems == nil || count <= *s.MaxItems)
}

// skip moves past the value at p.pos, checking its syntax as value does, and reports whether
// it is well-formed.
func (p *jsonParser) skip() bool {
	if p.pos >= len(p.src) {
		return false
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.skipObject()
	case c == '[':
		return p.skipArray()
	case c == '"':
		return p.skipString()
	case c == '-' || c >= '0' && c <= '9':
		return p.scanNumber() == ""
	case c == 't':
		return p.literal("true") == nil
	case c == 'f':
		return p.literal("false") == nil
	case c == 'n':
		return p.literal("null") == nil
	}
	return false
}

func (p *jsonParser) skipObject() bool {
	if p.enter() != nil {
		return false
	}
	if p.closes('}') {
		return true
	}
	for {
		if p.pos >= len(p.src) || p.src[p.pos] != '"' || !p.skipString() {
			return false
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return false
		}
		p.pos++
		p.skipSpace()
		if !p.skip() {
			return false
		}
		if more, ok := p.next('}'); !more {
			return ok
		}
	}
}

func (p *jsonParser) skipArray() bool {
	if p.enter() != nil {
		return false
	}
	if p.closes(']') {
		return true
	}
	for {
		if !p.skip() {
			return false
		}
		if more, ok := p.next(']'); !more {
			return ok
		}
	}
}

// skipString moves past the string at p.pos. It accepts what str does: any byte from 0x20 up,
// invalid UTF-8 included, and the escapes of RFC 8259.
func (p *jsonParser) skipString() bool {
	p.pos++ // opening quote
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			p.pos++
			if p.pos >= len(p.src) {
				return false
			}
			switch p.src[p.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos++
			case 'u':
				p.pos++
				if _, ok := p.hex4(); !ok {
					return false
				}
			default:
				return false
			}
		default:
			p.pos++
		}
	}
	return false
}
