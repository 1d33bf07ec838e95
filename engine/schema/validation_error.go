package schema

import (
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// FailureMessage is the human message of every schema failure, as the documentation shows it.
const FailureMessage = "Event data failed schema validation"

// dataRoot names the validated document in paths: the write path validates an event's data.
const dataRoot = "data"

// ValidationError is the documented error of a data failure. Path locates the failing value
// ("data.email", "data.items[2].sku"); Field is the property at fault relative to data
// ("email", "profile.name"), which for required and additionalProperties is the missing or
// unexpected property while Path is the object holding it. Constraint is the keyword that failed.
// Expected and Received are JSON-ready values: the keyword's requirement and what the data had.
type ValidationError struct {
	Path       string
	Field      string
	Constraint string
	Expected   any
	Received   any
	// Message is the human message, FailureMessage.
	Message string
	// Detail says briefly what failed, e.g. "type mismatch: expected string, got object".
	Detail string
}

func (e *ValidationError) Error() string {
	return e.Message + " at " + e.Path + ": " + e.Detail
}

// Unwrap lets errors.Is(err, ErrValidationFailed) recognise every schema failure.
func (e *ValidationError) Unwrap() error { return ErrValidationFailed }

// report picks the most useful failure of the tree the validator returned and describes it.
func report(root *jsonschema.ValidationError, data any) *ValidationError {
	leaves := failureLeaves(root)
	slices.SortStableFunc(leaves, compareLeaves)
	return describe(leaves[0], data)
}

// leaf is one failure: the instance location of the failing value and what failed there.
// detail and schemaURL break ties between failures at one place, whose order in the failure
// tree follows Go's map order.
type leaf struct {
	loc       []string
	kind      jsonschema.ErrorKind
	detail    string
	schemaURL string
}

func newLeaf(e *jsonschema.ValidationError, k jsonschema.ErrorKind) leaf {
	return leaf{loc: e.InstanceLocation, kind: k, detail: k.LocalizedString(messagePrinter), schemaURL: e.SchemaURL}
}

// failureLeaves flattens the failure tree into the failures a user can act on. Wrappers (the
// schema itself, groups, allOf, $ref) contribute all their causes; a failed anyOf or oneOf
// contributes only the branch that came closest to matching, or a single type failure when every
// branch failed on the type of the same value.
func failureLeaves(e *jsonschema.ValidationError) []leaf {
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		var out []leaf
		for _, c := range e.Causes {
			out = append(out, failureLeaves(c)...)
		}
		if len(out) == 0 {
			out = append(out, newLeaf(e, e.ErrorKind))
		}
		return out
	case *kind.AnyOf, *kind.OneOf:
		if o, ok := k.(*kind.OneOf); ok && o.Subschemas != nil {
			break
		}
		return closestBranch(e)
	}
	return []leaf{newLeaf(e, e.ErrorKind)}
}

func closestBranch(e *jsonschema.ValidationError) []leaf {
	if len(e.Causes) == 0 {
		return []leaf{newLeaf(e, e.ErrorKind)}
	}
	var (
		best      []leaf
		bestScore int
		types     []string
		allType   = true
	)
	for i, c := range e.Causes {
		ls := failureLeaves(c)
		score := len(ls)
		for _, l := range ls {
			t, ok := l.kind.(*kind.Type)
			if ok && slices.Equal(l.loc, e.InstanceLocation) {
				// A branch refused for the value's type was never the intended one.
				score += 1000
				types = append(types, t.Want...)
			} else {
				allType = false
			}
		}
		if i == 0 || score < bestScore {
			best, bestScore = ls, score
		}
	}
	if allType {
		got := ""
		if t, ok := best[0].kind.(*kind.Type); ok {
			got = t.Got
		}
		return []leaf{newLeaf(e, &kind.Type{Got: got, Want: uniqueStrings(types)})}
	}
	return best
}

func uniqueStrings(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// compareLeaves orders failures by where they are in the data, then by keywordRank, then by
// what they say and where in the schema they come from.
func compareLeaves(a, b leaf) int {
	for i := 0; i < len(a.loc) && i < len(b.loc); i++ {
		if c := compareTokens(a.loc[i], b.loc[i]); c != 0 {
			return c
		}
	}
	if c := len(a.loc) - len(b.loc); c != 0 {
		return c
	}
	if c := keywordRank(a.kind) - keywordRank(b.kind); c != 0 {
		return c
	}
	if c := strings.Compare(a.detail, b.detail); c != 0 {
		return c
	}
	return strings.Compare(a.schemaURL, b.schemaURL)
}

func compareTokens(a, b string) int {
	ai, aerr := strconv.Atoi(a)
	bi, berr := strconv.Atoi(b)
	if aerr == nil && berr == nil {
		return ai - bi
	}
	return strings.Compare(a, b)
}

// keywordRank puts the failures that explain the most first: a wrong type or a missing field
// before the finer constraints.
func keywordRank(k jsonschema.ErrorKind) int {
	switch k.(type) {
	case *kind.Type:
		return 0
	case *kind.Required:
		return 1
	case *kind.DependentRequired:
		return 2
	case *kind.AdditionalProperties:
		return 3
	case *kind.Const, *kind.Enum:
		return 4
	case *kind.Format:
		return 5
	default:
		return 6
	}
}

// describe turns one failure into the documented error.
func describe(l leaf, data any) *ValidationError {
	e := &ValidationError{Message: FailureMessage, Detail: l.detail}
	var value any
	e.Path, e.Field, value = locate(data, l.loc)
	e.Received = shown(value)
	switch k := l.kind.(type) {
	case *kind.Type:
		e.Constraint = "type"
		e.Expected = oneOrMany(k.Want)
		e.Received = k.Got
		e.Detail = "type mismatch: expected " + strings.Join(k.Want, " or ") + ", got " + k.Got
	case *kind.Required:
		e.Constraint, e.Field = "required", joinField(e.Field, k.Missing[0])
		e.Expected, e.Received = k.Missing, nil
		e.Detail = "missing required property"
	case *kind.DependentRequired:
		e.Constraint, e.Field = "dependentRequired", joinField(e.Field, k.Missing[0])
		e.Expected, e.Received = k.Missing, nil
		e.Detail = "missing property required when " + strconv.Quote(k.Prop) + " is present"
	case *kind.AdditionalProperties:
		props := slices.Sorted(slices.Values(k.Properties))
		e.Constraint, e.Field = "additionalProperties", joinField(e.Field, props[0])
		e.Expected, e.Received = false, props
		e.Detail = "unexpected property"
	case *kind.Format:
		e.Constraint, e.Expected = "format", k.Want
	case *kind.Enum:
		e.Constraint, e.Expected = "enum", k.Want
	case *kind.Const:
		e.Constraint, e.Expected = "const", k.Want
	case *kind.Pattern:
		e.Constraint, e.Expected = "pattern", k.Want
	case *kind.MinLength:
		e.Constraint, e.Expected, e.Received = "minLength", k.Want, k.Got
	case *kind.MaxLength:
		e.Constraint, e.Expected, e.Received = "maxLength", k.Want, k.Got
	case *kind.Minimum:
		e.Constraint, e.Expected = "minimum", number(k.Want)
	case *kind.Maximum:
		e.Constraint, e.Expected = "maximum", number(k.Want)
	case *kind.ExclusiveMinimum:
		e.Constraint, e.Expected = "exclusiveMinimum", number(k.Want)
	case *kind.ExclusiveMaximum:
		e.Constraint, e.Expected = "exclusiveMaximum", number(k.Want)
	case *kind.MultipleOf:
		e.Constraint, e.Expected = "multipleOf", number(k.Want)
	case *kind.MinItems:
		e.Constraint, e.Expected, e.Received = "minItems", k.Want, k.Got
	case *kind.MaxItems:
		e.Constraint, e.Expected, e.Received = "maxItems", k.Want, k.Got
	case *kind.UniqueItems:
		e.Constraint, e.Expected, e.Received = "uniqueItems", true, k.Duplicates[:]
	case *kind.Contains:
		e.Constraint = "contains"
	case *kind.MinContains:
		e.Constraint, e.Expected, e.Received = "minContains", k.Want, len(k.Got)
	case *kind.MaxContains:
		e.Constraint, e.Expected, e.Received = "maxContains", k.Want, len(k.Got)
	case *kind.MinProperties:
		e.Constraint, e.Expected, e.Received = "minProperties", k.Want, k.Got
	case *kind.MaxProperties:
		e.Constraint, e.Expected, e.Received = "maxProperties", k.Want, k.Got
	case *kind.PropertyNames:
		e.Constraint, e.Field, e.Received = "propertyNames", joinField(e.Field, k.Property), k.Property
	case *kind.OneOf:
		e.Constraint, e.Expected, e.Received = "oneOf", "exactly one subschema", k.Subschemas
	case *kind.AnyOf:
		e.Constraint = "anyOf"
	case *kind.Not:
		e.Constraint = "not"
	case *kind.FalseSchema:
		e.Constraint, e.Expected = "false", false
		e.Detail = "value not allowed here"
	default:
		e.Constraint = strings.Join(l.kind.KeywordPath(), "/")
	}
	return e
}

// locate walks data along loc and returns the path and field that name it, and the value there.
func locate(data any, loc []string) (path, field string, value any) {
	var sb strings.Builder
	value = data
	for _, tok := range loc {
		switch v := value.(type) {
		case []any:
			i, _ := strconv.Atoi(tok)
			sb.WriteString("[" + tok + "]")
			if i >= 0 && i < len(v) {
				value = v[i]
			}
		case map[string]any:
			if sb.Len() > 0 {
				sb.WriteString(fieldSegment(tok))
			} else {
				sb.WriteString(strings.TrimPrefix(fieldSegment(tok), "."))
			}
			value = v[tok]
		}
	}
	field = sb.String()
	switch {
	case field == "":
		path = dataRoot
	case strings.HasPrefix(field, "["):
		path = dataRoot + field
	default:
		path = dataRoot + "." + field
	}
	return path, field, value
}

// joinField names the property name inside the object at field.
func joinField(field, name string) string {
	if field == "" {
		return strings.TrimPrefix(fieldSegment(name), ".")
	}
	return field + fieldSegment(name)
}

// fieldSegment writes a property name as ".name", or as ["name"] when it is not a plain name.
func fieldSegment(name string) string {
	plain := name != ""
	for i, r := range name {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || (i > 0 && (r == '-' || r >= '0' && r <= '9'))) {
			plain = false
			break
		}
	}
	if plain {
		return "." + name
	}
	return "[" + strconv.Quote(name) + "]"
}

// shown is how a received value appears in an error: scalars as they are, objects and arrays by
// their type, so an error never echoes a whole document.
func shown(v any) any {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return v
}

func oneOrMany(s []string) any {
	if len(s) == 1 {
		return s[0]
	}
	return s
}

// number renders a schema bound as a JSON number.
func number(r *big.Rat) json.Number {
	if r.IsInt() {
		return json.Number(r.Num().String())
	}
	f, _ := r.Float64()
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}
