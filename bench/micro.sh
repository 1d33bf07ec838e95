#!/usr/bin/env bash
# Prints, as Markdown, the Go benchmarks that check the performance targets of the storage,
# declarative-core and data-plane work, with the Redis peer the storage target names measured in
# the same run (bench/storage_vs_redis.sh). `make bench` appends this to BENCHMARKS.md.
#
# Usage: bench/micro.sh   (BENCHTIME, default 2s, is each Go benchmark's time)
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime="${BENCHTIME:-2s}"

section() { # title, target, command...
	local title=$1 target=$2
	shift 2
	printf '\n### %s\n\nTarget: %s\n\nCommand: `%s`\n\n```\n' "$title" "$target" "$*"
	"$@" 2>&1 | grep -E '^(Benchmark|durable|Redis|j17 )' || true
	printf '```\n'
}

printf '\n## Go benchmarks of the targets\n\n'
printf 'Run by `make bench` right after the scenarios above, on the same machine; each line is one Go benchmark (`-benchtime %s`).\n' "$benchtime"

section "Durable commits beside Redis XADD (appendfsync always, 64 clients), same run" \
	"storage.Commit at 64 committers >= 200,000 events/s, and beside Redis" \
	env BENCHTIME="$benchtime" bash bench/storage_vs_redis.sh
section "Durable commits, 1 to 256 committers; replay; bytes on disk" \
	"p50/p99 with 1 and 64 committers; replay of 10,000 events >= 5M events/s" \
	go test -run '^$' -bench '^Benchmark(Commit|Replay|DiskBytes)$' -benchtime "$benchtime" ./storage/
section "Opening a 1 GiB log, index intact and deleted" \
	"recorded, no bound" \
	go test -run '^$' -bench '^BenchmarkOpen$' -benchtime 1x -timeout 30m ./storage/
section "Tick: replay of 10,000 events from raw JSON; order-management handlers" \
	"replay <= 5 ms on one core; >= 10,000,000 operations/s on one core" \
	go test -run '^$' -bench '^Benchmark(Replay|Tick)$' -benchtime "$benchtime" -cpu 1 ./tick/
section "JSON Schema: a typical event" \
	"<= 5 µs per event" \
	go test -run '^$' -bench '^BenchmarkValidate$' -benchtime "$benchtime" ./engine/schema/
section "HTTP writes and cached reads through the real server" \
	"one sequential writer p50 <= 0.5 ms, p99 <= 2 ms; cached read p50 <= 100 µs" \
	go test -run '^$' -bench '^BenchmarkHTTP' -benchtime 5000x ./api/
section "Engine reads: 1,000 and 10,000 events, uncached" \
	"<= 1 ms and <= 5 ms" \
	go test -run '^$' -bench '^BenchmarkRead$' -benchtime 200x ./engine/
section "A write with a 10-item map implication beside a plain write (the same ten inventory streams each time, or ten of a catalog of 10,000)" \
	"recorded: processor cost without HTTP (the target, an order at most 2x a plain write in throughput, is checked over HTTP by the map scenarios above; here many plain writes share each fsync and nothing pays for HTTP, so the ratio at 64 writers is roughly that of processor time per request)" \
	go test -run '^$' -bench 'ImplicationWrite' -benchtime "$benchtime" ./engine/
section "The storage part of that write: a record of one event beside one that also writes ten streams" \
	"recorded: the share of the ratio above that the commit alone accounts for" \
	go test -run '^$' -bench '^BenchmarkCommitFanout$' -benchtime "$benchtime" ./storage/
section "Merging the names of 3.1 million new streams into the index, 131,072 at a time" \
	"recorded: the indexer's merges of new names, the index bytes a name takes, a lookup" \
	go test -run '^$' -bench '^BenchmarkNamesMerge$' -benchtime 1x ./storage/
section "The filter of known streams that spares a commit to a new stream its index search" \
	"recorded: false positives (each one a search of the index under the commit lock), memory and lookup cost at 1 to 100 million streams" \
	go test -run '^$' -bench '^BenchmarkKnownStreams$' -benchtime "$benchtime" ./storage/
section "Scheduled events: 100,000 pending, due batches of 10,000" \
	"recorded: the index's memory per pending schedule; the time to fire a due batch of 10,000 durably, to 10,000 aggregates or all to one (fired in order, one after another), and to rebuild the index of 100,000 at open" \
	go test -run '^$' -bench '^Benchmark(ScheduledFire|Index)$' -benchtime 5x ./engine/ ./engine/schedule/
