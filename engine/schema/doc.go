// Package schema validates event data against the JSON Schema of an event type.
//
// A schema is a JSON Schema Draft 2020-12 document. Compile checks it against the rules j17 adds
// to the draft and compiles it once, at spec deploy; Validate and ValidateJSON then check each
// event's data against it on the write path.
//
// Rules added to the draft (Compile reports each violation as an Issue with a JSON Pointer to the
// offending keyword and what to use instead, all of them at once):
//
//   - unevaluatedProperties, unevaluatedItems, $dynamicRef, $dynamicAnchor, $anchor and
//     $vocabulary are refused wherever they appear in the schema.
//   - $ref must be a JSON Pointer into the same document ("#/$defs/name"). Nothing is ever loaded
//     from outside the document: the compiler's loader refuses every URL.
//   - $schema, where given, must name Draft 2020-12.
//   - contentEncoding, contentMediaType and contentSchema are annotations: they never reject data.
//
// Formats: format is an assertion for the formats the JSON Schema page lists (email, date-time,
// date, time, uri, uri-reference, uuid, hostname, ipv4, ipv6, regex, json-pointer); any other
// format name is an annotation. hostname checks A-labels by IDNA2008 (RFC 5891, RFC 5892; the
// Bidi rule of RFC 5893 is not applied, and the joining types the ZERO WIDTH NON-JOINER rule
// needs are known for the Arabic and Syriac blocks only). regex checks ECMA-262 syntax.
//
// Regular expressions: pattern and patternProperties run on Go's regexp package, RE2 syntax,
// where the hosted j17 uses the mvzr engine. RE2 matches in time linear in the input, so no
// pattern can make validation hang; a pattern RE2 cannot compile (a lookahead, a backreference)
// is an Issue at deploy, never a surprise at write time.
//
// Validation runs in steps. ValidateJSON first walks the JSON bytes with the compiled schema (the
// raw path, raw.go): a value the schema constrains by its type only is scanned, never built, and
// valid data, the common case, is done there. Otherwise the data is decoded and the fast path
// walks the compiled schema over the values, answering only whether they are valid; when they
// are not, the compiler's validator runs and its failure tree becomes one *ValidationError, the
// documented error body: path ("data.email"), and details {field, constraint, expected,
// received}. The three must agree on validity, and the compliance and fuzz tests check that they
// do; a schema node the raw path does not mirror has its value decoded and handed to the fast
// path, and a node the fast path does not mirror goes to the compiler's validator. The failure
// reported is chosen deterministically: failures are ordered by their place in the data, then by
// keyword (type, required, additionalProperties, enum/const, format, the rest), and for a failed
// anyOf or oneOf the branch that came closest is reported, or one type failure listing every
// allowed type.
//
// Data is parsed by a small JSON parser that keeps numbers exact (json.Number) and accepts and
// produces exactly what encoding/json does with UseNumber, nesting included (at most 10,000).
//
// Concurrency: a *Schema is immutable once Compile returns; any number of goroutines may
// validate with it at once. Compile shares nothing between calls.
package schema
