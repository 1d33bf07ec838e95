// Package e2e is the black-box HTTP test suite of the data plane. It builds the j17 binary once
// (with the race detector when the suite runs with -race), starts it as a child process on a free
// loopback port with a temporary data directory, sets up an instance over the control plane as
// the README's walk-through does, and talks to the server only over HTTP on 127.0.0.1, as a
// client following the documentation would.
//
// The documented examples and errors are data: testdata/cases holds one JSON file per
// documentation page, one case per example request and response or documented error. Each case
// names its source (page and section); a case the documentation implies but does not spell out
// says "source": "inferred" and names its basis. Where pages contradict each other, the cases
// follow CONTRACT.md. Behaviour that a single request cannot show (racing writers, restarts,
// kill -9 recovery, idempotency across a restart, paging limits, caching) lives in Go tests.
//
// Invariants of the suite: it never leaves a server process behind (each child is stopped with
// SIGTERM, then SIGKILL, in cleanup, and dies with the test binary on Linux); every case makes
// its own identifiers, or uses an aggregate type no other case writes, so cases do not depend on
// each other's writes; a data race the server reports fails the run; it uses no network other
// than 127.0.0.1.
//
// Concurrency: tests run one after another. Most share one server; tests that restart or kill a
// server, or need other flags, start their own. Within a test, concurrent clients are the point.
package e2e
