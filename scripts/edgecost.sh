#!/usr/bin/env bash
# Instructions per request of leaf's HTTP edge, against a bare net/http
# handler, counted by valgrind's callgrind: a count that does not depend
# on what else the machine is doing, where scripts/loadtest.sh's
# requests/s do. Each server runs alone under callgrind with GOMAXPROCS=1;
# after a warm-up, instrumentation is switched on for one wrk run of
# DURATION and off again, and the instructions the process executed in
# that window are divided by the requests wrk completed. The garbage
# collector's share is in the count: it is the part of a request's cost
# that the live heap drives. Go's asynchronous preemption is off
# (GODEBUG=asyncpreemptoff=1): its signals upset callgrind.
#   PORT      (default 18090)     DURATION (default 10s)
#   CONNS     (default 8)          ROUNDS   (default 1)
#   LEAF_ENV  extra environment, e.g. LEAF_ENV="GOGC=100" (the bare
#             handler gets it too)
#   LEAF_BIN  a leaf binary to measure instead of building bin/leaf
set -euo pipefail

cd "$(dirname "$0")/.."

PORT=${PORT:-18090}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-8}
ROUNDS=${ROUNDS:-1}
LEAF_ENV=${LEAF_ENV:-}
TOKEN="edgecost-admin-token-$$-${RANDOM}"
unset LEAF_MYSQL_DSN LEAF_STORES
for kv in $LEAF_ENV; do
	export "${kv?}"
done

# shellcheck source=scripts/apt.sh
source scripts/apt.sh
apt_need wrk=wrk valgrind=valgrind callgrind_control=valgrind
if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:${PORT}/"; then
	echo "something already listens on 127.0.0.1:${PORT}; set PORT=..." >&2
	exit 1
fi

tmp=$(mktemp -d)
vg_pid=""
stop() {
	if [[ -n "$vg_pid" ]] && kill -0 "$vg_pid" 2>/dev/null; then
		kill "$vg_pid" 2>/dev/null || true
		wait "$vg_pid" 2>/dev/null || true
	fi
	vg_pid=""
}
cleanup() {
	stop
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z "${LEAF_BIN:-}" ]]; then
	echo "==> building bin/leaf and the bare handler"
	make build >/dev/null
	LEAF_BIN=./bin/leaf
fi
(cd bench && go build -o "$tmp/bare" ./cmd/bare)

# count NAME URL CMD...: starts CMD under callgrind, waits for URL, warms
# it up, and prints the instructions per request of one measured run.
count() {
	local name=$1 url=$2
	shift 2
	local out="$tmp/callgrind.$name"
	env GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$out.%p" "$@" >"$tmp/$name.log" 2>&1 &
	vg_pid=$!
	local base=${url%/api/*}
	base=${base%/healthz}
	for _ in $(seq 1 300); do
		curl -fs -o /dev/null --max-time 2 "$base/healthz" 2>/dev/null && break
		curl -fs -o /dev/null --max-time 2 "$base/" 2>/dev/null && break
		kill -0 "$vg_pid" 2>/dev/null || { cat "$tmp/$name.log" >&2; exit 1; }
		sleep 0.5
	done
	if [[ -n "${SETUP:-}" ]]; then
		eval "$SETUP"
	fi
	curl -fsS -o /dev/null --max-time 5 "$url"
	wrk -t1 -c"$CONNS" -d3s "$url" >/dev/null
	callgrind_control -i on "$vg_pid" >/dev/null 2>&1
	local w
	w=$(wrk -t1 -c"$CONNS" -d"$DURATION" "$url")
	callgrind_control -i off "$vg_pid" >/dev/null 2>&1
	callgrind_control -d "$vg_pid" >/dev/null 2>&1
	local reqs ir f
	reqs=$(awk '/requests in/ {print $1}' <<<"$w")
	if grep -q 'Non-2xx or 3xx responses' <<<"$w"; then
		echo "warning: $url returned non-2xx responses" >&2
	fi
	stop
	f=$(ls -S "$out".* | head -1)
	ir=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')
	rm -f "$out".*
	[[ -n "$reqs" && -n "$ir" && "$reqs" -gt 0 ]] || { echo "no count for $name (requests ${reqs:-none}, instructions ${ir:-none})" >&2; cat "$tmp/$name.log" >&2; exit 1; }
	echo $((ir / reqs))
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

LEAF="http://127.0.0.1:${PORT}"
SETUP_TAG="curl -fsS -o /dev/null -X POST ${LEAF}/api/admin/tags -H 'Authorization: Bearer ${TOKEN}' -H 'Content-Type: application/json' -d '{\"tag\":\"bench\",\"step\":100000}'"
declare -A all
paths=(/api/segment/get/bench /api/snowflake/get /healthz)
for round in $(seq 1 "$ROUNDS"); do
	b=$(count bare "http://127.0.0.1:${PORT}/" "$tmp/bare" -addr "127.0.0.1:${PORT}")
	echo "round ${round}: bare handler: ${b} instructions/request"
	all[bare]+="$b "
	for p in "${paths[@]}"; do
		rm -f "$tmp/leaf.db"*
		n=$(SETUP="$SETUP_TAG" LEAF_ADDR="127.0.0.1:${PORT}" LEAF_SQLITE_PATH="$tmp/leaf.db" \
			LEAF_ADMIN_TOKEN="$TOKEN" count leaf "${LEAF}${p}" "$LEAF_BIN" serve)
		echo "round ${round}: ${p}: ${n} instructions/request"
		all[$p]+="$n "
	done
done

echo
echo "==> instructions per request, median of ${ROUNDS} round(s) (GOMAXPROCS=1, ${CONNS} connections, ${DURATION})"
bm=$(tr ' ' '\n' <<<"${all[bare]}" | grep . | median)
printf '%-24s %14s %10s\n' endpoint 'instr/request' 'vs bare'
for k in bare "${paths[@]}"; do
	m=$(tr ' ' '\n' <<<"${all[$k]}" | grep . | median)
	awk -v k="$k" -v m="$m" -v b="$bm" 'BEGIN { printf "%-24s %14.0f %9.2fx\n", k, m, m / b }'
done
