#!/usr/bin/env bash
# Requests per second of the owned kinds at their owner and through the
# other instance (forwarded), against a bare net/http handler, with wrk,
# on 127.0.0.1 only.
# Two leaf instances on one MariaDB (a fresh database on the server at
# 127.0.0.1:3306, dropped at the end), an ordered tag and a sequence key;
# which instance owns each is read from their forward counters. ROUNDS
# interleaved rounds of: the bare handler, the ordered tag at its owner
# and at the other instance, the key's next number at its owner and at the
# other instance; the summary prints each one's median requests/s, p99,
# and the median and range of its ratios to the bare handler's run of the
# same round.
# Where the machine has two cores or more, the servers run pinned to
# SERVER_CPUS and wrk to LOAD_CPUS (taskset).
#   PORT      (default 18090; the second instance PORT+1, the bare handler PORT+2)
#   DURATION  (default 6s)       THREADS  (default 2)
#   CONNS     (default 64)       ROUNDS   (default 3)
#   MYSQL     (default root@tcp(127.0.0.1:3306)/)
#   LEAF_BIN  (default: bin/leaf, built by make build) another build to measure
#   SERVER_CPUS (default 0)      LOAD_CPUS (default 1-(nproc-1)); PIN=0 turns pinning off
set -euo pipefail

cd "$(dirname "$0")/.."

PORT=${PORT:-18090}
DURATION=${DURATION:-6s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
ROUNDS=${ROUNDS:-3}
MYSQL=${MYSQL:-root@tcp(127.0.0.1:3306)/}
# shellcheck source=scripts/pin.sh
source scripts/pin.sh
TOKEN="forwardtest-admin-token-$$-${RANDOM}"
DB="leaf_forwardtest_$$"

# shellcheck source=scripts/apt.sh
source scripts/apt.sh
apt_need wrk=wrk mariadb=mariadb-client
command -v curl >/dev/null 2>&1 || { echo "curl is required" >&2; exit 1; }

A="127.0.0.1:${PORT}"
B="127.0.0.1:$((PORT + 1))"
BARE="127.0.0.1:$((PORT + 2))"
for addr in "$A" "$B" "$BARE"; do
	if curl -s -o /dev/null --max-time 1 "http://${addr}/"; then
		echo "something already listens on ${addr}; set PORT=..." >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	mariadb -h 127.0.0.1 -u root -e "DROP DATABASE IF EXISTS ${DB}" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

LEAF=${LEAF_BIN:-}
if [[ -z "$LEAF" ]]; then
	make build >/dev/null
	LEAF=./bin/leaf
fi
(cd bench && go build -o "$tmp/bare" ./cmd/bare)
mariadb -h 127.0.0.1 -u root -e "CREATE DATABASE ${DB}"
DSN="${MYSQL}${DB}"
"$LEAF" migrate --mysql-dsn "$DSN" >/dev/null

serve() { # addr
	"${on_server[@]}" "$LEAF" serve --addr "$1" --advertise-addr "$1" --mysql-dsn "$DSN" \
		--admin-token "$TOKEN" --log-level warn >"$tmp/leaf-$1.log" 2>&1 &
	pids+=($!)
}
serve "$A"
serve "$B"
"${on_server[@]}" "$tmp/bare" -addr "$BARE" >/dev/null 2>&1 &
pids+=($!)
for addr in "$A" "$B" "$BARE"; do
	for _ in $(seq 100); do
		curl -s -o /dev/null --max-time 1 "http://${addr}/" && break
		sleep 0.1
	done
done

admin() { # path body
	curl -sf -H "Authorization: Bearer ${TOKEN}" -d "$2" "http://${A}/api/admin/$1" >/dev/null
}
admin tags '{"tag":"ord","ordered":true,"step":10000}'
admin sequences '{"space":"sp","step":10000,"sections":1}'

forwards() { # addr
	curl -s "http://$1/metrics" | awk '/^leaf_sequence_forwards_total\{result="ok"\}/ {print $2}'
}
ORD_PATH=/api/segment/get/ord
SEQ_PATH=/api/sequence/next/sp/k
run() { # url seconds -> "rps p99_ms non2xx"
	"${on_load[@]}" wrk -t"$THREADS" -c"$CONNS" -d"$2" --latency "$1" >"$tmp/wrk" 2>&1
	awk '/Requests\/sec/ {rps=$2} /^ +99%/ {p=$2; u=p; gsub(/[0-9.]/,"",u); v=p+0; if (u=="us") v/=1000; if (u=="s") v*=1000; p99=v}
		/Non-2xx/ {bad=$NF} END {printf "%.0f %.1f %d\n", rps, p99, bad}' "$tmp/wrk"
}
# Warm-up: both instances, both paths, once the first answers come (the
# owners settle as the instances see each other).
for path in "$ORD_PATH" "$SEQ_PATH"; do
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://${A}${path}" && curl -sf -o /dev/null "http://${B}${path}" && break
		sleep 0.2
	done
	run "http://${A}${path}" 2s >/dev/null
	run "http://${B}${path}" 2s >/dev/null
done
run "http://${BARE}/" 2s >/dev/null
# owner PATH: "OWNER OTHER", the instance that answers 20 requests for PATH
# without forwarding one first.
owner() {
	local before
	before=$(forwards "$A")
	for _ in $(seq 20); do curl -sf -o /dev/null "http://${A}$1"; done
	if [[ "$(forwards "$A")" == "$before" ]]; then
		echo "$A $B"
	else
		echo "$B $A"
	fi
}
read -r ORD_OWNER ORD_OTHER < <(owner "$ORD_PATH")
read -r SEQ_OWNER SEQ_OTHER < <(owner "$SEQ_PATH")
echo "ordered tag: owner ${ORD_OWNER}; sequence key: owner ${SEQ_OWNER}"

declare -A url=(
	[bare]="http://${BARE}/"
	[ordered_owner]="http://${ORD_OWNER}${ORD_PATH}"
	[ordered_forwarded]="http://${ORD_OTHER}${ORD_PATH}"
	[sequence_owner]="http://${SEQ_OWNER}${SEQ_PATH}"
	[sequence_forwarded]="http://${SEQ_OTHER}${SEQ_PATH}"
)
order=(bare ordered_owner ordered_forwarded sequence_owner sequence_forwarded)

declare -A rps p99 ratios
for r in $(seq "$ROUNDS"); do
	read -r base _ _ < <(run "${url[bare]}" "$DURATION")
	rps[bare]+="$base "
	line="round $r: bare ${base}/s"
	for name in "${order[@]:1}"; do
		read -r v p bad < <(run "${url[$name]}" "$DURATION")
		if [[ "$bad" -gt 0 ]]; then
			echo "${name}: ${bad} answers other than 2xx" >&2
			exit 1
		fi
		rps[$name]+="$v "
		p99[$name]+="$p "
		ratios[$name]+="$(awk -v a="$v" -v b="$base" 'BEGIN {printf "%.3f", a/b}') "
		line+=", ${name} ${v}/s"
	done
	echo "$line"
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {print lo "-" hi}'; }
printf '%-20s %12s %10s %22s\n' endpoint "requests/s" "p99 ms" "ratio to bare (range)"
printf '%-20s %12s %10s %22s\n' bare "$(median <<<"${rps[bare]}")" - 1
for name in "${order[@]:1}"; do
	printf '%-20s %12s %10s %22s\n' "$name" "$(median <<<"${rps[$name]}")" "$(median <<<"${p99[$name]}")" \
		"$(median <<<"${ratios[$name]}") ($(range <<<"${ratios[$name]}"))"
done
for addr in "$A" "$B"; do
	echo "${addr}: forwarded requests $(forwards "$addr"), calls answered through them $(curl -s "http://${addr}/metrics" | awk '/^leaf_sequence_forwarded_calls_total/ {print $2}')"
done
