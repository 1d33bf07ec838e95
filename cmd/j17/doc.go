// Command j17 is the j17 event-sourcing platform as one self-hosted binary.
//
//	j17 serve [flags]        run the HTTP server (control plane and data plane)
//	j17 spec validate FILE   validate a spec
//	j17 handler test ...     run a spec's handlers on sample events
//	j17 events ...           check events against a spec; dry-run folds them, with their
//	                         implications, into aggregates and lists schedules and sagas
//	j17 repair [--data DIR]  truncate damaged logs at their first bad record (server stopped)
//	j17 verify PATH          verify chains and Merkle roots of a data directory or an NDJSON export
//
// This package is the only place that reads flags and environment variables; every other
// package takes explicit options. `j17 serve` takes each flag also from an environment variable
// (flags win over the environment, the environment over the defaults):
//
//	--data DIR          J17_DATA            ./data
//	--listen ADDR       J17_LISTEN          127.0.0.1:8017
//	--rate-limit-key N  J17_RATE_LIMIT_KEY  500 requests/minute per API key (0 = off)
//	--rate-limit-ip N   J17_RATE_LIMIT_IP   2000 requests/minute per client IP (0 = off)
//	--max-body BYTES    J17_MAX_BODY        1048576
//	--base-domain D     J17_BASE_DOMAIN     none (host routing: <name>.D, <name>-staging.D, <name>-test.D)
//	--cache-bytes N     J17_CACHE_BYTES     268435456 aggregate cache budget (0 = off)
//	--snapshot-every N  J17_SNAPSHOT_EVERY  1000 events between aggregate snapshots
//	--implication-max-depth N  J17_IMPLICATION_MAX_DEPTH  5 (max_depth of implication chains)
//	--implication-max-total N  J17_IMPLICATION_MAX_TOTAL  100 (max_total implied events per trigger)
//	--scheduler-poll D  J17_SCHEDULER_POLL  500ms between looks for due scheduled events
//	--log-format F      J17_LOG_FORMAT      text (or json)
//	--log-level L       J17_LOG_LEVEL       info
//	--cpu-profile FILE  J17_CPU_PROFILE     none (the CPU profile from start to a SIGINT/SIGTERM shutdown)
//
// Data directory layout: DATA/control.db (control-plane records), DATA/jwt_secret (the operator
// token signing key, mode 0600), DATA/node_secret (the X-Node-Secret value of the /_internal/ API,
// as written in the file, mode 0600), DATA/bootstrap.txt (the first operator's generated credentials,
// mode 0600, only when J17_ADMIN_PASSWORD was not set at first start), and DATA/<instance-uuid>/<env>/
// for each (instance, environment)'s own data.
//
// serve stops on SIGINT or SIGTERM: it stops accepting connections, lets requests in flight
// finish (up to 30 s), then closes its stores.
//
// J17_TEST_CRASH_AFTER_COMMIT=1 is for crash tests only: the server kills itself with SIGKILL
// right after its first event write is committed and before it is answered.
package main
