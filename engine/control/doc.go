// Package control keeps the control-plane records of a j17 server: operators, instances, the
// deployed spec versions of each (instance, environment), API keys and the recent request errors.
//
// All records live in one bbolt file (conventionally DATA/control.db), separate from the event
// storage of any instance, so that losing or rebuilding an instance's data never touches its keys
// or specs.
//
// Invariants:
//   - Instance names are unique lowercase slugs that can never be read as a UUID, nor end in an
//     environment suffix ("-staging", "-test"), so that host names and lookups are unambiguous.
//   - API key secrets are never stored: only their SHA-256 digest, indexed for lookup. A key is
//     usable until it is revoked or its scheduled revocation time passes (by the store's clock).
//   - Spec versions of an (instance, environment) start at 1 and increase by one per deploy; the
//     history is kept, and a deploy is checked against the version it replaces inside the same
//     write transaction, so two racing deploys cannot both build on the same predecessor.
//   - Every environment's keys, specs and error records are keyed by (instance, environment);
//     nothing is shared between pairs.
//   - At most Options.MaxErrorsPerPair error records are kept per (instance, environment); the
//     oldest go first.
//
// Durability: every mutation is one bbolt transaction, fsynced before the call returns.
//
// Concurrency: a Store is safe for concurrent use. bbolt serialises writers and lets readers run
// beside them, so key lookups on the request path never wait on a deploy. Resolved keys are also
// kept in memory, and all of them forgotten when any write transaction ends, so a request
// usually opens no transaction at all; whether a key is revoked is checked at every use.
package control
