// Package bench measures j17 side by side with its peers, Redis streams and PostgreSQL, and
// writes BENCHMARKS.md.
//
// The suite starts every system itself on 127.0.0.1 (our server from its binary, the peers from
// the distribution's packages), drives all of them with the same load generator in the same run,
// and records each scenario several times so that the table shows medians, not luck. The runs of a
// scenario alternate between the systems, one run of each in turn, because the speed of a virtual
// machine drifts within minutes and would otherwise favour whichever system ran in its faster ones;
// each run starts once the machine is idle (quiet.go), so that work one system leaves running is
// not measured against the next. For the same reason the orders, which BENCHMARKS.md prices in
// single-event writes, run those writes again in their own rounds (Scenario.Reference) instead of
// borrowing the figure of the write table measured minutes earlier; the price is given as the
// ratio of the two medians and round by round, each round's reference run over the order run just
// before it.
//
// The load generator has two modes. Closed-loop: each connection sends its next request as soon
// as the previous one is answered; this measures throughput. Open-loop: requests are due at a
// fixed rate whether or not earlier ones were answered, and each latency is measured from the
// moment the request was due, not from when it was sent. A stalled server therefore shows up in
// every request that queued behind the stall, which corrects the coordinated omission of
// closed-loop latencies. Latencies go into an HDR-style histogram with a relative error below
// 1/64.
//
// Running: `make bench` runs the full sizes and rewrites BENCHMARKS.md, its charts under
// bench/charts/ and the raw results in bench/out/results.json; `make bench BENCH_QUICK=1` runs the
// same scenarios small and short; BENCH_ARGS passes flags to `loadgen run` (for instance
// BENCH_ARGS="-only read -peers redis"; no single quotes). `make bench-compare OLD=<ref>` builds j17 at
// OLD, runs the suite against it and against the working tree's binary, and prints the change of
// every metric, marking with "~" the changes that the spread of the runs cannot tell from noise.
//
// Invariants:
//   - No number is made up: a scenario that a system cannot run is reported as failing with the
//     system's own answer.
//   - A peer that cannot be started is named in the report and the suite carries on without it.
//   - Every process the suite starts is stopped before it returns.
//
// Concurrency: Drive runs one goroutine per connection and merges their histograms when they
// finish; a Histogram itself is not safe for concurrent use. The rest of the suite is sequential.
package bench
