#!/usr/bin/env bash
# Writes cmd/leaf/default.pgo, the CPU profile that `go build ./cmd/leaf`
# (and make build, and the Dockerfile) optimize the binary for
# (profile-guided optimization). The profile is of leaf serve on the
# embedded SQLite store under the load a busy instance sees most: wrk on
# GET /api/segment/get/{tag} (most of the time), /api/snowflake/get, a
# segment batch, /api/uuid/get and /healthz, on 127.0.0.1. Run it again
# when the request path changes much; commit the new default.pgo with the
# change, and its effect (scripts/loadtest.sh) in BENCHMARKS.md.
#   PORT (default 18095)   SECONDS_EACH (default 10, the segment route 3x that)
set -euo pipefail

cd "$(dirname "$0")/.."

PORT=${PORT:-18095}
EACH=${SECONDS_EACH:-10}
BASE="http://127.0.0.1:${PORT}"
TOKEN="pgo-admin-token-$$-${RANDOM}"

# shellcheck source=scripts/apt.sh
source scripts/apt.sh
apt_need wrk=wrk
if curl -s -o /dev/null --max-time 1 "${BASE}/healthz"; then
	echo "something already listens on 127.0.0.1:${PORT}; set PORT=..." >&2
	exit 1
fi

tmp=$(mktemp -d)
pid=""
cleanup() {
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "==> building leaf with the profiling signals, without the current profile"
CGO_ENABLED=0 go build -tags pgoprofile -pgo=off -o "$tmp/leaf" ./cmd/leaf

env -u LEAF_MYSQL_DSN -u LEAF_STORES \
	LEAF_ADDR="127.0.0.1:${PORT}" LEAF_SQLITE_PATH="$tmp/leaf.db" LEAF_ADMIN_TOKEN="$TOKEN" \
	LEAF_CPU_PROFILE="$tmp/cpu.pprof" "$tmp/leaf" serve >"$tmp/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
	curl -fs -o /dev/null --max-time 1 "${BASE}/readyz" && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/server.log" >&2; exit 1; }
	sleep 0.2
done
curl -fsS -o /dev/null -X POST "${BASE}/api/admin/tags" -H "Authorization: Bearer ${TOKEN}" \
	-H 'Content-Type: application/json' -d '{"tag":"bench","step":100000}'

wrk -t2 -c64 -d2s "${BASE}/api/segment/get/bench" >/dev/null # warm-up
kill -USR1 "$pid"
run() {
	echo "    wrk -t2 -c64 -d$2 $1"
	wrk -t2 -c64 -d"$2" "${BASE}$1" | grep -E 'Requests/sec|Non-2xx' || true
}
echo "==> profiling"
run /api/segment/get/bench "$((EACH * 3))s"
run /api/snowflake/get "${EACH}s"
run "/api/segment/batch/bench?count=10" "${EACH}s"
run /api/uuid/get "${EACH}s"
run /healthz "${EACH}s"
kill -USR2 "$pid"
for _ in $(seq 1 50); do
	[[ -s "$tmp/cpu.pprof" ]] && break
	sleep 0.1
done
sleep 0.5
cp "$tmp/cpu.pprof" cmd/leaf/default.pgo
echo "==> wrote cmd/leaf/default.pgo ($(wc -c <cmd/leaf/default.pgo) bytes)"
