#!/usr/bin/env bash
# Installs the benchmark peers from the distribution's packages when they are missing: Redis 7
# (redis-server, redis-tools) and PostgreSQL. Without root or apt-get it only says what is
# missing; the suite then reports those peers as not started and carries on.
set -uo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 && command -v redis-benchmark >/dev/null 2>&1 || missing+=(redis-server redis-tools)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "bench: missing peers (${missing[*]}); install them to measure those peers" >&2
	exit 0
fi
echo "bench: installing ${missing[*]}" >&2
apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 ||
	echo "bench: could not install ${missing[*]}; those peers will be reported as not started" >&2
exit 0
