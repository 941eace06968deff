#!/usr/bin/env bash
# Local load test with wrk, against 127.0.0.1 only.
# Builds bin/leaf and, from the bench module, a bare net/http handler that
# writes a constant (the ceiling) and the Go client's load program. Serves
# leaf on a temporary SQLite file, creates tag "bench", then measures
# /api/segment/get/bench, /api/snowflake/get, /healthz and the bare handler
# in ROUNDS interleaved rounds (after one warm-up round of 2s each). The
# bare handler is measured before the first round and at the end of each,
# so each endpoint's ratio in a round is to the mean of the bare runs just
# before and just after it: a machine whose speed drifts during a round
# moves both alike. The summary prints, per endpoint, the median
# requests/s and p99, and the median and the range (min-max) of its round
# ratios. Last,
# the Go client takes ids from the same leaf for DURATION with 1 and with
# 8 goroutines, through Client.Next and through a client.Source in each
# goroutine, and prints ids/s.
# Where the machine has two cores or more, the servers (leaf and the bare
# handler) run pinned to SERVER_CPUS and wrk to LOAD_CPUS (taskset), so
# the load generator does not take the servers' core; both are then
# measured on the same core(s).
#   PORT      (default 18080; the bare handler uses PORT+1)
#   DURATION  (default 10s)      THREADS  (default 2)
#   CONNS     (default 64)       ROUNDS   (default 5)
#   SERVER_CPUS (default 0)      LOAD_CPUS (default 1-(nproc-1)); PIN=0 turns pinning off
set -euo pipefail

cd "$(dirname "$0")/.."

PORT=${PORT:-18080}
DURATION=${DURATION:-10s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
ROUNDS=${ROUNDS:-5}
BASE="http://127.0.0.1:${PORT}"
# shellcheck source=scripts/pin.sh
source scripts/pin.sh
TOKEN="loadtest-admin-token-$$-${RANDOM}"

# shellcheck source=scripts/apt.sh
source scripts/apt.sh
apt_need wrk=wrk
command -v curl >/dev/null 2>&1 || { echo "curl is required" >&2; exit 1; }

if curl -s -o /dev/null --max-time 1 "${BASE}/healthz"; then
	echo "something already listens on 127.0.0.1:${PORT}; set PORT=..." >&2
	exit 1
fi

BARE="http://127.0.0.1:$((PORT + 1))"
if curl -s -o /dev/null --max-time 1 "${BARE}/"; then
	echo "something already listens on 127.0.0.1:$((PORT + 1)); set PORT=..." >&2
	exit 1
fi

tmp=$(mktemp -d)
server_pid=""
bare_pid=""
cleanup() {
	for pid in "$server_pid" "$bare_pid"; do
		if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		fi
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "==> building bin/leaf, the bare handler and the client's load program"
make build
(cd bench && go build -o "$tmp/bare" ./cmd/bare && go build -o "$tmp/clientload" ./cmd/clientload)
"${on_server[@]}" "$tmp/bare" -addr "127.0.0.1:$((PORT + 1))" >"$tmp/bare.log" 2>&1 &
bare_pid=$!

echo "==> starting leaf serve on 127.0.0.1:${PORT} (SQLite at $tmp/leaf.db)"
# Configuration through the environment keeps the token out of `ps`.
env -u LEAF_MYSQL_DSN \
	LEAF_ADDR="127.0.0.1:${PORT}" \
	LEAF_SQLITE_PATH="$tmp/leaf.db" \
	LEAF_ADMIN_TOKEN="$TOKEN" \
	LEAF_LOG_FORMAT=text \
	"${on_server[@]}" ./bin/leaf serve >"$tmp/server.log" 2>&1 &
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
targets=("${BASE}/api/segment/get/bench" "${BASE}/api/snowflake/get" "${BASE}/healthz" "${BARE}/")
names=(/api/segment/get/bench /api/snowflake/get /healthz bare)
for u in "${targets[@]}"; do
	curl -fsS -o /dev/null --max-time 5 "$u" || { echo "GET $u failed" >&2; exit 1; }
done

# measure URL DURATION: wrk's requests/s and p99 (ms) for one run.
measure() {
	local out r p99
	out=$("${on_load[@]}" wrk -t"$THREADS" -c"$CONNS" -d"$2" --latency "$1")
	if grep -q 'Non-2xx or 3xx responses' <<<"$out"; then
		echo "warning: $1 returned non-2xx responses during the run" >&2
	fi
	r=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } print v }' <<<"$out")
	[[ -n "$r" && -n "$p99" ]] || { echo "could not read Requests/sec or p99 for $1" >&2; exit 1; }
	echo "$r $p99"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

echo "==> warm-up: 2s on each endpoint"
for u in "${targets[@]}"; do measure "$u" 2s >/dev/null; done

declare -A rps p99s ratios
bare_i=$((${#targets[@]} - 1))
read -r bare_before _ <<<"$(measure "${targets[$bare_i]}" "$DURATION")"
echo "round 0: bare handler: ${bare_before} requests/s"
for round in $(seq 1 "$ROUNDS"); do
	declare -A this=()
	for i in "${!targets[@]}"; do
		read -r r p <<<"$(measure "${targets[$i]}" "$DURATION")"
		echo "round ${round}: wrk -t${THREADS} -c${CONNS} -d${DURATION} --latency ${targets[$i]}: ${r} requests/s, p99 ${p} ms"
		rps[$i]+="$r "
		p99s[$i]+="$p "
		this[$i]=$r
	done
	bare_after=${this[$bare_i]}
	for i in "${!targets[@]}"; do
		ratios[$i]+="$(awk -v r="${this[$i]}" -v b1="$bare_before" -v b2="$bare_after" 'BEGIN { b = (b1 + b2) / 2; printf "%.3f", (b > 0 ? r / b : 0) }') "
	done
	bare_before=$bare_after
done

echo
echo "==> medians of ${ROUNDS} rounds (${THREADS} threads, ${CONNS} connections, ${DURATION} each)"
echo "    vs bare: the median of the rounds' ratios to the bare handler (the mean of its runs before and after), and their range"
printf '%-24s %12s %9s %15s %10s   %s\n' endpoint 'requests/s' 'vs bare' 'range' 'p99 ms' 'ratios by round'
for i in "${!targets[@]}"; do
	m=$(tr ' ' '\n' <<<"${rps[$i]}" | grep . | median)
	p=$(tr ' ' '\n' <<<"${p99s[$i]}" | grep . | median)
	rm=$(tr ' ' '\n' <<<"${ratios[$i]}" | grep . | median)
	lo=$(tr ' ' '\n' <<<"${ratios[$i]}" | grep . | sort -g | head -1)
	hi=$(tr ' ' '\n' <<<"${ratios[$i]}" | grep . | sort -g | tail -1)
	awk -v n="${names[$i]}" -v r="$m" -v rm="$rm" -v lo="$lo" -v hi="$hi" -v p="$p" -v all="${ratios[$i]}" \
		'BEGIN { printf "%-24s %12.0f %8.2fx %7.2f-%.2fx %10.2f   %s\n", n, r, rm, lo, hi, p, all }'
done

echo
echo "==> the Go client against the same leaf, ${DURATION} each"
for g in 1 8; do
	r=$("${on_load[@]}" "$tmp/clientload" -endpoint "$BASE" -tag bench -goroutines "$g" -d "$DURATION")
	echo "client.Next from ${g} goroutine(s): ${r} ids/s"
done
for g in 1 8; do
	r=$("${on_load[@]}" "$tmp/clientload" -endpoint "$BASE" -tag bench -goroutines "$g" -source -d "$DURATION")
	echo "client.Source, one in each of ${g} goroutine(s): ${r} ids/s"
done
