#!/usr/bin/env bash
# Runs every Fuzz* target in this folder for FUZZTIME each (default 30s).
# Crashers are written by the Go toolchain to testdata/fuzz/<Target>/ and replayed by `make test`.
set -euo pipefail
cd "$(dirname "$0")"
fuzztime="${FUZZTIME:-30s}"
targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' ./*_test.go | sed 's/^func //' | sort -u)
if [ -z "$targets" ]; then
	echo "no fuzz targets found" >&2
	exit 1
fi
# crashers prints how many inputs the toolchain has written for a target.
crashers() {
	local files=("testdata/fuzz/$1"/*)
	echo "${#files[@]}"
}
shopt -s nullglob
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
for t in $targets; do
	echo "== $t ($fuzztime)"
	before=$(crashers "$t")
	if go test -run '^$' -fuzz "^${t}\$" -fuzztime "$fuzztime" . 2>&1 | tee "$log"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
		continue
	fi
	after=$(crashers "$t")
	# Go before 1.27 can fail a target with a bare "context deadline exceeded" when -fuzztime
	# ends while a worker is busy (go.dev/issue/75804): no input is written and nothing failed.
	# That case passes if the target's corpus still replays cleanly.
	if [ "$after" -eq "$before" ] && grep -q '^    context deadline exceeded$' "$log" && go test -run "^${t}\$" . >/dev/null; then
		echo "== $t: Go's fuzzing coordinator missed its own deadline (go.dev/issue/75804); no input failed"
		continue
	fi
	failed=1
	echo "!! $t found a failure; its input is under testdata/fuzz/$t/" >&2
done
exit $failed
