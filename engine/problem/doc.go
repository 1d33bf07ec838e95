// Package problem classifies the failures of the data plane. Every feature of the write and read
// paths answers a request it refuses with an *Error whose Kind is one of four sentinels; the api
// maps each sentinel to one status code (400, 422, 404, 409) and copies the rest of the Error into
// the error envelope of the contract.
//
// Invariants: Kind is always one of the sentinels below; Message is safe to show a client (it
// never holds event payloads beyond the offending identifier, quoted and truncated by its maker).
//
// Concurrency: an *Error is immutable once returned.
package problem
