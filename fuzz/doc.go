// Package fuzz holds the project's `go test -fuzz` targets, one file per area (log records, specs,
// Tick, identifiers, schemas, ...), each with a seed corpus taken from the documentation's examples.
//
// Every target checks a property, not only the absence of a panic: a spec that validates compiles,
// identifier normalization is idempotent, canonical JSON round-trips, recovery never yields a record
// with a bad checksum. Crashers found by `make fuzz` are kept under testdata/fuzz/ so that plain
// `go test` (and so `make test`) replays them.
package fuzz
