#!/usr/bin/env bash
# Durable single-event appends, side by side, from the same run on the same machine:
#   - Redis 7 XADD with appendonly yes / appendfsync always, 64 clients (redis-benchmark);
#   - j17 storage.Commit with real fsync, 64 concurrent committers (BenchmarkCommit).
# Installs redis-server and redis-tools with apt-get when they are missing. Redis listens on
# 127.0.0.1 on a free port with a temporary directory, and is stopped before the Go benchmark.
#
# Usage: bench/storage_vs_redis.sh [requests]   (default 200000 XADDs; BENCHTIME=3s for Go)
set -euo pipefail
cd "$(dirname "$0")/.."

requests="${1:-200000}"
benchtime="${BENCHTIME:-3s}"

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-benchmark >/dev/null 2>&1; then
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server redis-tools
fi

sync
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
tmp=$(mktemp -d)
redis-server --bind 127.0.0.1 --port "$port" --dir "$tmp" --appendonly yes --appendfsync always \
	--save '' --daemonize no --logfile "$tmp/redis.log" &
redis_pid=$!
cleanup() {
	if kill -0 "$redis_pid" 2>/dev/null; then
		kill "$redis_pid"
		wait "$redis_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

for _ in $(seq 1 50); do
	redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break
	sleep 0.1
done
redis_version=$(redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p')

# One ~300-byte field per entry, like the Go benchmark's event; 64 clients; keys spread over
# 10,000 streams as the Go committers each use their own stream.
payload=$(head -c 300 /dev/zero | tr '\0' 'x')
redis_out=$(redis-benchmark -h 127.0.0.1 -p "$port" -c 64 -n "$requests" -r 10000 -q \
	XADD 'stream:__rand_int__' '*' data "$payload" 2>&1 | tr '\r' '\n' | grep -i 'requests per second' | tail -1)
redis_rps=$(echo "$redis_out" | sed -n 's/.*: *\([0-9.]*\) requests per second.*/\1/p')
redis_p50=$(echo "$redis_out" | sed -n 's/.*p50=\([0-9.]*\) msec.*/\1/p')
cleanup
trap - EXIT
# Redis's append-only file is gone with its directory; let the disk finish that work before the
# Go benchmark's fsyncs are timed, as Redis's were on a quiet disk.
sync
sleep 2

go_out=$(go test -run '^$' -bench '^BenchmarkCommit$/^writers=64/' -benchtime "$benchtime" ./storage/ | grep '^BenchmarkCommit')
echo "$go_out"
go_eps=$(echo "$go_out" | sed -n 's/.* \([0-9.e+]*\) events\/s.*/\1/p')
go_p50=$(echo "$go_out" | sed -n 's/.* \([0-9.]*\) p50-µs.*/\1/p')
go_p99=$(echo "$go_out" | sed -n 's/.* \([0-9.]*\) p99-µs.*/\1/p')

echo
printf '%-46s %14s %12s\n' "durable appends, 64 concurrent writers" "events/s" "p50"
printf '%-46s %14.0f %10s ms\n' "Redis $redis_version XADD, appendfsync always" "$redis_rps" "${redis_p50:-?}"
printf '%-46s %14.0f %10.3f ms   (p99 %.3f ms)\n' "j17 storage.Commit, fsync per group" "$go_eps" "$(echo "$go_p50 / 1000" | bc -l)" "$(echo "$go_p99 / 1000" | bc -l)"
