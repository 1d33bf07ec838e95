// Package ident normalizes and validates the identifiers j17 accepts: aggregate keys (the {id} of
// a URL), metadata.actor.id and metadata.target.id. One rule serves all three (identifiers.md):
// an id is a v4 or v5 UUID, a 9-character humane code, a singleton (the implicit global or a name
// the spec declares), or a tagged UUID (<uuid>:<tag>). Actors whose type starts with system_ are
// the exception: their id must be one of a fixed allowlist and the general rule does not apply.
//
// Normalization and validation happen in one call, in this order:
//
//  1. global, and any declared singleton, match the id exactly as supplied (case-sensitive) and
//     pass through unchanged. A declared name therefore keeps its spelling even where it would
//     also read as a humane code.
//  2. An id with the UUID layout (36 characters, hyphens after the 8th, 12th, 16th and 20th hex
//     digits) must be hex with version 4 or 5 and variant 8, 9, a or b; it is lowercased. No
//     other spelling is accepted: no braces, no urn:uuid: prefix, no 32-digit form.
//  3. An id with a colon is a tagged UUID: the part before the first colon follows rule 2 and is
//     lowercased; the tag after it is 1-10 characters of [a-z0-9] and is never case-folded.
//  4. An id of 9 bytes is a humane code: lowercase is uppercased, I and L become 1, O becomes 0,
//     U becomes V, and the result must be Crockford base32 (0-9, A-Z without I, L, O, U).
//     Separators are not stripped: identifiers.md defines none, so ABC-123-XYZ is rejected.
//  5. Anything else is rejected.
//
// Invariants: a normalized id normalizes to itself with the same kind (idempotence); two
// spellings of one UUID or one humane code normalize to the same id, so they key the same
// stream; an id that is already canonical is returned without allocating. Every failure is an
// *Error naming the field (its JSON path, for the 422 answer), the kind of id that was expected,
// and a sentinel from errors.go.
//
// Concurrency: Rules is immutable once built by NewRules and safe for concurrent use; the
// package has no other state.
package ident
