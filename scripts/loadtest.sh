#!/usr/bin/env bash
# Local load test with wrk, against 127.0.0.1 only.
# Builds bin/leaf, serves it on a temporary SQLite file, creates tag "bench",
# then measures /api/segment/get/bench, /api/snowflake/get and the /healthz
# baseline in ROUNDS interleaved rounds (after one warm-up round of 2s each),
# and prints each one's median requests/s and its ratio to the baseline's.
#   PORT      (default 18080)    DURATION (default 10s)
#   THREADS   (default 2)        CONNS    (default 64)
#   ROUNDS    (default 5)
set -euo pipefail

cd "$(dirname "$0")/.."

PORT=${PORT:-18080}
DURATION=${DURATION:-10s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
ROUNDS=${ROUNDS:-5}
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

# measure PATH DURATION: wrk's requests/s for one run.
measure() {
	local out r
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$2" "${BASE}$1")
	if grep -q 'Non-2xx or 3xx responses' <<<"$out"; then
		echo "warning: $1 returned non-2xx responses during the run" >&2
	fi
	r=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	[[ -n "$r" ]] || { echo "could not read Requests/sec for $1" >&2; exit 1; }
	echo "$r"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

echo "==> warm-up: 2s on each endpoint"
for p in "${paths[@]}"; do measure "$p" 2s >/dev/null; done

declare -A runs
for round in $(seq 1 "$ROUNDS"); do
	for p in "${paths[@]}"; do
		r=$(measure "$p" "$DURATION")
		echo "round ${round}: wrk -t${THREADS} -c${CONNS} -d${DURATION} ${BASE}${p}: ${r} requests/s"
		runs[$p]+="$r "
	done
done

echo
echo "==> medians of ${ROUNDS} rounds (${THREADS} threads, ${CONNS} connections, ${DURATION} each)"
base=$(tr ' ' '\n' <<<"${runs[/healthz]}" | grep . | median)
printf '%-28s %14s %10s   %s\n' endpoint 'requests/s' 'vs /healthz' 'runs'
for p in "${paths[@]}"; do
	m=$(tr ' ' '\n' <<<"${runs[$p]}" | grep . | median)
	awk -v p="$p" -v r="$m" -v b="$base" -v all="${runs[$p]}" \
		'BEGIN { printf "%-28s %14.0f %9.2fx   %s\n", p, r, (b > 0 ? r / b : 0), all }'
done
