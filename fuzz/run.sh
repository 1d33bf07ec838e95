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
failed=0
for t in $targets; do
	echo "== $t ($fuzztime)"
	if ! go test -run '^$' -fuzz "^${t}\$" -fuzztime "$fuzztime" .; then
		failed=1
		echo "!! $t found a failure; its input is under testdata/fuzz/$t/" >&2
	fi
done
exit $failed
