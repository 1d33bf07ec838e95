package schema

import (
	"slices"
	"strconv"
	"strings"
)

// draft202012 is the only $schema a schema may name, with or without the empty fragment.
const draft202012 = "https://json-schema.org/draft/2020-12/schema"

// unsupportedKeywords maps each keyword j17 rejects to the message that says what to use instead.
var unsupportedKeywords = map[string]string{
	"unevaluatedProperties": "unevaluatedProperties is not supported (it needs evaluation tracking across subschemas): list the fields in properties and set additionalProperties: false on the same object",
	"unevaluatedItems":      "unevaluatedItems is not supported (it needs evaluation tracking across subschemas): use prefixItems with items: false, or an items schema",
	"$dynamicRef":           "$dynamicRef is not supported: use $ref to a definition, e.g. \"#/$defs/name\"",
	"$dynamicAnchor":        "$dynamicAnchor is not supported: put the schema in $defs and reference it with $ref \"#/$defs/name\"",
	"$anchor":               "$anchor is not supported: use $defs + $ref instead, e.g. \"$ref\": \"#/$defs/name\"",
	"$vocabulary":           "$vocabulary is not supported: remove it; Draft 2020-12 with format assertion is always used",
}

// Keywords whose value is one subschema, an object of subschemas, or an array of subschemas.
// definitions and dependencies are the pre-2020 spellings the 2020-12 metaschema still admits.
var (
	schemaKeywords      = []string{"additionalProperties", "propertyNames", "items", "contains", "not", "if", "then", "else", "contentSchema"}
	schemaMapKeywords   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	schemaArrayKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
)

// checkKeywords walks every subschema of doc and reports each use of a keyword j17 does not
// support, each $ref that leaves the document and each $schema other than Draft 2020-12.
// Only schema positions are walked, so a property merely named "$anchor" is fine.
func checkKeywords(doc any) []Issue {
	var issues []Issue
	walkSchema(doc, "", &issues)
	slices.SortStableFunc(issues, func(a, b Issue) int { return strings.Compare(a.Pointer, b.Pointer) })
	return issues
}

func walkSchema(v any, ptr string, issues *[]Issue) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	for kw, msg := range unsupportedKeywords {
		if _, ok := obj[kw]; ok {
			*issues = append(*issues, Issue{Pointer: ptr + "/" + escapePointer(kw), Message: msg})
		}
	}
	if ref, ok := obj["$ref"].(string); ok {
		if msg := checkRef(ref); msg != "" {
			*issues = append(*issues, Issue{Pointer: ptr + "/$ref", Message: msg})
		}
	}
	if s, ok := obj["$schema"].(string); ok && strings.TrimSuffix(s, "#") != draft202012 {
		*issues = append(*issues, Issue{Pointer: ptr + "/$schema", Message: "$schema " + strconv.Quote(s) + " is not supported: only Draft 2020-12 is, so remove $schema or set it to \"" + draft202012 + "\""})
	}
	for _, kw := range schemaKeywords {
		if sub, ok := obj[kw]; ok {
			walkSchema(sub, ptr+"/"+kw, issues)
		}
	}
	for _, kw := range schemaMapKeywords {
		if m, ok := obj[kw].(map[string]any); ok {
			for name, sub := range m {
				walkSchema(sub, ptr+"/"+kw+"/"+escapePointer(name), issues)
			}
		}
	}
	for _, kw := range schemaArrayKeywords {
		if arr, ok := obj[kw].([]any); ok {
			for i, sub := range arr {
				walkSchema(sub, ptr+"/"+kw+"/"+strconv.Itoa(i), issues)
			}
		}
	}
}

// checkRef returns why ref is refused, or "" when it is a JSON Pointer into this document.
func checkRef(ref string) string {
	switch {
	case ref == "#" || strings.HasPrefix(ref, "#/"):
		return ""
	case strings.HasPrefix(ref, "#"):
		return "$ref " + strconv.Quote(ref) + " names an anchor, which is not supported: point into $defs with a JSON Pointer, e.g. \"#/$defs/name\""
	default:
		return "$ref " + strconv.Quote(ref) + " is not a local reference (remote and $id-relative references are not supported): define the schema in $defs and use \"#/$defs/name\""
	}
}

func escapePointer(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
