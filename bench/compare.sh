#!/bin/sh
# Usage: bench/compare.sh OLD [loadgen run flags...]
#
# Builds j17 as of the git ref OLD from an exported copy of its tree (git archive, so the
# repository and the working tree are left as they are), runs the same suite, built from the
# working tree, against that binary and against bin/j17, and prints the change of every metric
# in the manner of benchstat. Results stay in bench/out/old, bench/out/new and
# bench/out/compare.txt. The peers are left out unless the flags ask for them (-peers redis,postgres).
set -eu
[ $# -ge 1 ] || { echo "usage: $0 OLD [loadgen run flags...]" >&2; exit 2; }
old=$1
shift
rev=$(git rev-parse --short "$old^{commit}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/j17-bench-compare-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mkdir "$tmp/src"
git archive --format=tar "$rev" | tar -x -C "$tmp/src"
[ -d "$tmp/src/cmd/j17" ] || { echo "$old ($rev) has no cmd/j17 to build" >&2; exit 1; }
echo "building j17 at $rev" >&2
(cd "$tmp/src" && go build -o "$tmp/j17-old" ./cmd/j17)
go build -o "$tmp/loadgen" ./bench/cmd/loadgen
"$tmp/loadgen" run -j17 "$tmp/j17-old" -commit "$rev" -out bench/out/old -peers none "$@"
"$tmp/loadgen" run -j17 bin/j17 -out bench/out/new -peers none "$@"
"$tmp/loadgen" compare bench/out/old/results.json bench/out/new/results.json | tee bench/out/compare.txt
