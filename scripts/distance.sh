#!/usr/bin/env bash
# What the database's distance costs each kind of id (bench/cmd/distance):
# one leaf serve on MySQL through a proxy that holds each of the database's
# answers for 0, 5, 20 and 100 ms, and wrk against it: the time from healthy
# to the first ordered id and the first sequence number, the plain tag's
# first load (p99, waits on the database), then each kind warm. Builds
# bin/leaf; each delay runs on a database of its own on the server, dropped
# after.
#   MYSQL_DSN  server DSN without a database (default root@tcp(127.0.0.1:3306)/)
#   DELAYS     comma-separated delays (default 0,5ms,20ms,100ms)
#   DURATION   each load's length (default 6s)
#   PLAIN_STEP the plain tag's step, its first range (default 1000)
set -euo pipefail

cd "$(dirname "$0")/.."

command -v wrk >/dev/null || { echo "wrk not found (Debian's wrk)"; exit 1; }
make build
cd bench
go run ./cmd/distance -leaf ../bin/leaf \
	-mysql "${MYSQL_DSN:-root@tcp(127.0.0.1:3306)/}" \
	-delays "${DELAYS:-0,5ms,20ms,100ms}" \
	-duration "${DURATION:-6s}" \
	-plain-step "${PLAIN_STEP:-1000}"
