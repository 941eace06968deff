#!/usr/bin/env bash
# Local load test with wrk, against 127.0.0.1 only.
# Builds bin/leaf, serves it on a temporary SQLite file, creates tag "bench",
# then measures /api/segment/get/bench, /api/snowflake/get and the /healthz
# baseline, and prints each one's requests/s and its ratio to the baseline.
#   PORT      (default 18080)    DURATION (default 10s)
#   THREADS   (default 2)        CONNS    (default 64)
set -euo pipefail

cd "$(dirname "$0")/.."

PORT=${PORT:-18080}
DURATION=${DURATION:-10s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
BASE="http://127.0.0.1:${PORT}"
TOKEN="loadtest-$$-${RANDOM}"

if ! command -v wrk >/dev/null 2>&1; then
	echo "installing wrk from apt"
	sudo=""
	[[ $EUID -eq 0 ]] || sudo="sudo -n"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null
fi
command -v curl >/dev/null 2>&1 || { echo "curl is required" >&2; exit 1; }

if curl -s -o /dev/null --max-time 1 "${BASE}/healthz"; then
	echo "something already listens on 127.0.0.1:${PORT}; set PORT=..." >&2
	exit 1
fi

echo "==> building bin/leaf"
make build

tmp=$(mktemp -d)
server_pid=""
cleanup() {
	if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "==> starting leaf serve on 127.0.0.1:${PORT} (SQLite at $tmp/leaf.db)"
# Configuration through the environment keeps the token out of `ps`.
env -u LEAF_MYSQL_DSN \
	LEAF_ADDR="127.0.0.1:${PORT}" \
	LEAF_SQLITE_PATH="$tmp/leaf.db" \
	LEAF_ADMIN_TOKEN="$TOKEN" \
	LEAF_LOG_FORMAT=text \
	./bin/leaf serve >"$tmp/server.log" 2>&1 &
server_pid=$!

for _ in $(seq 1 100); do
	if curl -fs -o /dev/null --max-time 1 "${BASE}/readyz"; then
		break
	fi
	if ! kill -0 "$server_pid" 2>/dev/null; then
		echo "leaf serve exited early; its log:" >&2
		cat "$tmp/server.log" >&2
		exit 1
	fi
	sleep 0.2
done
if ! curl -fs -o /dev/null --max-time 1 "${BASE}/readyz"; then
	echo "leaf serve not ready after 20s; its log:" >&2
	cat "$tmp/server.log" >&2
	exit 1
fi

echo "==> creating tag bench"
curl -fsS -X POST "${BASE}/api/admin/tags" \
	-H "Authorization: Bearer ${TOKEN}" \
	-H 'Content-Type: application/json' \
	-d '{"tag":"bench","step":100000}'
echo

# Each endpoint must answer 2xx before it is measured.
paths=(/healthz /api/segment/get/bench /api/snowflake/get)
for p in "${paths[@]}"; do
	curl -fsS -o /dev/null --max-time 5 "${BASE}${p}" || { echo "GET $p failed" >&2; exit 1; }
done

declare -A rps
for p in "${paths[@]}"; do
	echo "==> wrk -t${THREADS} -c${CONNS} -d${DURATION} ${BASE}${p}"
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" "${BASE}${p}")
	echo "$out"
	if grep -q 'Non-2xx or 3xx responses' <<<"$out"; then
		echo "warning: $p returned non-2xx responses during the run" >&2
	fi
	rps[$p]=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	[[ -n "${rps[$p]}" ]] || { echo "could not read Requests/sec for $p" >&2; exit 1; }
done

echo
echo "==> results (${THREADS} threads, ${CONNS} connections, ${DURATION} each)"
base=${rps[/healthz]}
printf '%-28s %14s %10s\n' endpoint 'requests/s' 'vs /healthz'
for p in "${paths[@]}"; do
	awk -v p="$p" -v r="${rps[$p]}" -v b="$base" \
		'BEGIN { printf "%-28s %14.0f %9.2fx\n", p, r, (b > 0 ? r / b : 0) }'
done
