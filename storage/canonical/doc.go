// Package canonical turns JSON text into its canonical form, the byte string that event hashes and
// idempotency body hashes are computed over.
//
// The canonical form of a JSON value:
//
//   - has no whitespace outside strings;
//   - writes object members sorted by the UTF-8 bytes of their unescaped keys; duplicate keys are an error;
//   - keeps every number exactly as written (no conversion to floating point: 1.0 stays 1.0 and
//     12345678901234567890 keeps every digit), except that the exponent marker is written `e` and
//     a `+` after it is dropped (1E+3 becomes 1e3);
//   - writes strings with the shortest escapes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00xx`
//     (lowercase hex) for the other control characters, and every other character as raw UTF-8
//     (so `\u00e9` and `é` both become `é`, and `\/` becomes `/`). Invalid UTF-8 and lone
//     surrogate escapes are errors.
//
// IsCanonical tells in one pass, without allocating, whether a text is already canonical, so that
// a caller can keep such a text (the common case) instead of rewriting it. Depth measures the
// nesting of a valid text, for the callers that bound it.
//
// Canonicalization is idempotent: the canonical form of a canonical text is itself. Nesting deeper
// than MaxDepth is an error, so that hostile input cannot exhaust the stack.
//
// Concurrency: every function is pure and safe for concurrent use.
package canonical
