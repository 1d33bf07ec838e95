package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The fast path answers "is this data valid?" over the compiled schema without building the
// error tree the compiler's validator builds as it goes. Valid data, the common case on the write
// path, is accepted by the fast path alone; data it finds invalid is validated again by the
// compiler's validator, which explains the failure. The fast path must therefore agree exactly
// with the compiler's validator: where a schema node uses anything it does not mirror, that node
// is handed to the compiler's validator, and a schema whose $ref graph loops without descending
// into the data has no fast path at all. The compliance and fuzz tests compare the two.

// JSON types as bits, so a node's "type" is one mask test.
const (
	typeNull uint8 = 1 << iota
	typeBoolean
	typeNumber
	typeInteger
	typeString
	typeArray
	typeObject
)

var typeBits = map[string]uint8{
	"null": typeNull, "boolean": typeBoolean, "number": typeNumber, "integer": typeInteger,
	"string": typeString, "array": typeArray, "object": typeObject,
}

// uniqueItemsLimit bounds the pairwise uniqueItems check; longer arrays go to the compiler's
// validator, which hashes.
const uniqueItemsLimit = 20

// node mirrors one compiled schema with its subschemas linked as nodes and its bounds prepared.
type node struct {
	lib  *jsonschema.Schema
	slow bool // validated by the compiler's validator

	types                    uint8
	ref, not                 *node
	ifN, thenN, elseN        *node
	allOf, anyOf, oneOf      []*node
	properties               map[string]*node
	patternProperties        []patternNode
	additional               *node
	additionalFalse          bool
	propertyNames            *node
	dependentSchemas         map[string]*node
	prefixItems              []*node
	items, contains          *node
	minimum, maximum         *bound
	exclMinimum, exclMaximum *bound

	raw rawShape
}

type patternNode struct {
	re jsonschema.Regexp
	n  *node
}

// bound is a numeric limit exactly and as the nearest float64, which decides most comparisons.
type bound struct {
	exact  *big.Rat
	approx float64
}

func newBound(r *big.Rat) *bound {
	if r == nil {
		return nil
	}
	f, _ := r.Float64()
	return &bound{exact: r, approx: f}
}

// buildFast mirrors root, or returns nil when the schema has no fast path.
func buildFast(root *jsonschema.Schema) *node {
	nodes := map[*jsonschema.Schema]*node{}
	n := mirror(root, nodes)
	if sameInstanceCycle(n) {
		return nil
	}
	for _, m := range nodes {
		m.shapeRaw()
	}
	return n
}

func mirror(s *jsonschema.Schema, nodes map[*jsonschema.Schema]*node) *node {
	if s == nil {
		return nil
	}
	if n, ok := nodes[s]; ok {
		return n
	}
	n := &node{lib: s}
	nodes[s] = n
	if s.DraftVersion != 2020 || len(s.Extensions) > 0 || s.DynamicRef != nil || s.RecursiveRef != nil ||
		s.Dependencies != nil || s.Items != nil || s.AdditionalItems != nil || s.ContentEncoding != nil ||
		s.ContentMediaType != nil || s.ContentSchema != nil || s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil {
		n.slow = true
		return n
	}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			n.types |= typeBits[t]
		}
	}
	sub := func(s *jsonschema.Schema) *node { return mirror(s, nodes) }
	subs := func(ss []*jsonschema.Schema) []*node {
		var out []*node
		for _, s := range ss {
			out = append(out, sub(s))
		}
		return out
	}
	n.ref, n.not = sub(s.Ref), sub(s.Not)
	n.ifN, n.thenN, n.elseN = sub(s.If), sub(s.Then), sub(s.Else)
	n.allOf, n.anyOf, n.oneOf = subs(s.AllOf), subs(s.AnyOf), subs(s.OneOf)
	if len(s.Properties) > 0 {
		n.properties = make(map[string]*node, len(s.Properties))
		for name, ps := range s.Properties {
			n.properties[name] = sub(ps)
		}
	}
	for re, ps := range s.PatternProperties {
		n.patternProperties = append(n.patternProperties, patternNode{re: re, n: sub(ps)})
	}
	switch a := s.AdditionalProperties.(type) {
	case bool:
		n.additionalFalse = !a
	case *jsonschema.Schema:
		n.additional = sub(a)
	}
	n.propertyNames = sub(s.PropertyNames)
	if len(s.DependentSchemas) > 0 {
		n.dependentSchemas = make(map[string]*node, len(s.DependentSchemas))
		for name, ds := range s.DependentSchemas {
			n.dependentSchemas[name] = sub(ds)
		}
	}
	n.prefixItems, n.items, n.contains = subs(s.PrefixItems), sub(s.Items2020), sub(s.Contains)
	n.minimum, n.maximum = newBound(s.Minimum), newBound(s.Maximum)
	n.exclMinimum, n.exclMaximum = newBound(s.ExclusiveMinimum), newBound(s.ExclusiveMaximum)
	return n
}

// sameInstanceCycle reports whether some node can reach itself through keywords that apply to
// the same value ($ref, allOf, ...): validating it would never end, and the compiler's validator
// reports such loops as failures.
func sameInstanceCycle(root *node) bool {
	const (
		visiting = 1
		done     = 2
	)
	state := map[*node]int{}
	var visit func(n *node) bool
	var walkAll func(n *node) bool
	visit = func(n *node) bool {
		if n == nil || n.slow {
			return false
		}
		switch state[n] {
		case visiting:
			return true
		case done:
			return false
		}
		state[n] = visiting
		same := append([]*node{n.ref, n.not, n.ifN, n.thenN, n.elseN}, n.allOf...)
		same = append(append(same, n.anyOf...), n.oneOf...)
		for _, d := range n.dependentSchemas {
			same = append(same, d)
		}
		for _, m := range same {
			if visit(m) {
				return true
			}
		}
		state[n] = done
		return false
	}
	seen := map[*node]bool{}
	walkAll = func(n *node) bool {
		if n == nil || n.slow || seen[n] {
			return false
		}
		seen[n] = true
		if visit(n) {
			return true
		}
		kids := append([]*node{n.ref, n.not, n.ifN, n.thenN, n.elseN, n.additional, n.propertyNames, n.items, n.contains}, n.allOf...)
		kids = append(append(append(kids, n.anyOf...), n.oneOf...), n.prefixItems...)
		for _, p := range n.properties {
			kids = append(kids, p)
		}
		for _, p := range n.patternProperties {
			kids = append(kids, p.n)
		}
		for _, d := range n.dependentSchemas {
			kids = append(kids, d)
		}
		for _, k := range kids {
			if walkAll(k) {
				return true
			}
		}
		return false
	}
	return walkAll(root)
}

// valid reports whether v satisfies the node, exactly as the compiler's validator would.
func (n *node) valid(v any) bool {
	s := n.lib
	if n.slow {
		return s.Validate(v) == nil
	}
	if s.Bool != nil {
		return *s.Bool
	}
	t := typeOfValue(v)
	if t == 0 {
		return s.Validate(v) == nil
	}
	if n.types != 0 && n.types&t == 0 && !(n.types&typeInteger != 0 && t == typeNumber && isIntegral(v)) {
		return false
	}
	if s.Const != nil && !jsonEqual(v, *s.Const) {
		return false
	}
	if s.Enum != nil && !inEnum(v, s.Enum.Values) {
		return false
	}
	if s.Format != nil && s.Format.Validate(v) != nil {
		return false
	}
	if n.ref != nil && !n.ref.valid(v) {
		return false
	}
	var ok bool
	switch v := v.(type) {
	case map[string]any:
		ok = n.objectValid(v)
	case []any:
		if s.UniqueItems && len(v) > uniqueItemsLimit {
			return s.Validate(v) == nil
		}
		ok = n.arrayValid(v)
	case string:
		ok = n.stringValid(v)
	case bool, nil:
		ok = true
	default:
		ok = n.numberValid(v)
	}
	return ok && n.applicatorsValid(v)
}

func (n *node) applicatorsValid(v any) bool {
	if n.not != nil && n.not.valid(v) {
		return false
	}
	for _, m := range n.allOf {
		if !m.valid(v) {
			return false
		}
	}
	if len(n.anyOf) > 0 {
		matched := false
		for _, m := range n.anyOf {
			if m.valid(v) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, m := range n.oneOf {
			if m.valid(v) {
				matched++
			}
		}
		if matched != 1 {
			return false
		}
	}
	if n.ifN != nil {
		if n.ifN.valid(v) {
			return n.thenN == nil || n.thenN.valid(v)
		}
		return n.elseN == nil || n.elseN.valid(v)
	}
	return true
}

func (n *node) objectValid(obj map[string]any) bool {
	s := n.lib
	if s.MinProperties != nil && len(obj) < *s.MinProperties || s.MaxProperties != nil && len(obj) > *s.MaxProperties {
		return false
	}
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			return false
		}
	}
	for name, pv := range obj {
		evaluated := false
		if p, ok := n.properties[name]; ok {
			evaluated = true
			if !p.valid(pv) {
				return false
			}
		}
		for _, pp := range n.patternProperties {
			if pp.re.MatchString(name) {
				evaluated = true
				if !pp.n.valid(pv) {
					return false
				}
			}
		}
		if !evaluated && (n.additionalFalse || n.additional != nil && !n.additional.valid(pv)) {
			return false
		}
		if n.propertyNames != nil && !n.propertyNames.valid(name) {
			return false
		}
	}
	for name, reqd := range s.DependentRequired {
		if _, ok := obj[name]; ok {
			for _, r := range reqd {
				if _, ok := obj[r]; !ok {
					return false
				}
			}
		}
	}
	for name, d := range n.dependentSchemas {
		if _, ok := obj[name]; ok && !d.valid(obj) {
			return false
		}
	}
	return true
}

func (n *node) arrayValid(arr []any) bool {
	s := n.lib
	if s.MinItems != nil && len(arr) < *s.MinItems || s.MaxItems != nil && len(arr) > *s.MaxItems {
		return false
	}
	if s.UniqueItems {
		for i := 1; i < len(arr); i++ {
			for j := 0; j < i; j++ {
				if jsonEqual(arr[i], arr[j]) {
					return false
				}
			}
		}
	}
	for i, item := range arr {
		switch {
		case i < len(n.prefixItems):
			if !n.prefixItems[i].valid(item) {
				return false
			}
		case n.items != nil:
			if !n.items.valid(item) {
				return false
			}
		}
	}
	if n.contains != nil {
		matched := 0
		for _, item := range arr {
			if n.contains.valid(item) {
				matched++
			}
		}
		if s.MinContains != nil {
			if matched < *s.MinContains {
				return false
			}
		} else if matched == 0 {
			return false
		}
		if s.MaxContains != nil && matched > *s.MaxContains {
			return false
		}
	}
	return true
}

func (n *node) stringValid(str string) bool {
	s := n.lib
	if s.MinLength != nil || s.MaxLength != nil {
		l := utf8.RuneCountInString(str)
		if s.MinLength != nil && l < *s.MinLength || s.MaxLength != nil && l > *s.MaxLength {
			return false
		}
	}
	return s.Pattern == nil || s.Pattern.MatchString(str)
}

func (n *node) numberValid(v any) bool {
	if n.minimum != nil && compareNumber(v, n.minimum) < 0 ||
		n.maximum != nil && compareNumber(v, n.maximum) > 0 ||
		n.exclMinimum != nil && compareNumber(v, n.exclMinimum) <= 0 ||
		n.exclMaximum != nil && compareNumber(v, n.exclMaximum) >= 0 {
		return false
	}
	if m := n.lib.MultipleOf; m != nil {
		r, ok := exactNumber(v)
		return ok && new(big.Rat).Quo(r, m).IsInt()
	}
	return true
}

// compareNumber compares v with b. Rounding to float64 keeps order, so differing floats decide;
// only equal floats need the exact comparison.
func compareNumber(v any, b *bound) int {
	if f, ok := approxNumber(v); ok {
		switch {
		case f < b.approx:
			return -1
		case f > b.approx:
			return 1
		}
	}
	r, ok := exactNumber(v)
	if !ok {
		return 0
	}
	return r.Cmp(b.exact)
}

func approxNumber(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		return f, err == nil && !math.IsInf(f, 0)
	}
	return 0, false
}

// exactNumber reads v as the compiler's validator does: from its decimal text.
func exactNumber(v any) (*big.Rat, bool) {
	if n, ok := v.(json.Number); ok {
		return new(big.Rat).SetString(string(n))
	}
	return new(big.Rat).SetString(fmt.Sprint(v))
}

func isIntegral(v any) bool {
	if n, ok := v.(json.Number); ok && !strings.ContainsAny(string(n), ".eE") {
		return true
	}
	r, ok := exactNumber(v)
	return ok && r.IsInt()
}

func typeOfValue(v any) uint8 {
	switch v := v.(type) {
	case nil:
		return typeNull
	case bool:
		return typeBoolean
	case string:
		return typeString
	case map[string]any:
		return typeObject
	case []any:
		return typeArray
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return typeNumber
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0
		}
		return typeNumber
	case json.Number, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return typeNumber
	}
	return 0
}

func inEnum(v any, values []any) bool {
	for _, e := range values {
		if jsonEqual(v, e) {
			return true
		}
	}
	return false
}

// jsonEqual is JSON equality: numbers by value (1 equals 1.0), objects regardless of key order.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case nil:
		return b == nil
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !jsonEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	if typeOfValue(b) != typeNumber {
		return false
	}
	if an, ok := a.(json.Number); ok {
		if bn, ok := b.(json.Number); ok && an == bn {
			return true
		}
	}
	if af, ok := approxNumber(a); ok {
		if bf, ok := approxNumber(b); ok && af != bf {
			return false
		}
	}
	ar, ok1 := exactNumber(a)
	br, ok2 := exactNumber(b)
	return ok1 && ok2 && ar.Cmp(br) == 0
}
