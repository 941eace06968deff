#!/usr/bin/env bash
# How ids/s grow with cores: the hot-path benchmarks of client/ and
# segment/ (a bare atomic add, Next, and a Source per goroutine, each from
# one goroutine and in parallel; the client's also with the server's
# largest ranges) at -cpu 1 and at -cpu NCPU, in ROUNDS interleaved
# rounds. On a shared machine another process can take a core
# in the middle of a run, and a parallel run then measures one core, not
# two. So each round starts only when the machine was idle for a second
# (at least IDLE% of its CPU time), each run's CPU share is recorded, and
# the medians are of the runs that had the cores they asked for (at least
# 90% of each); the summary says how many runs that is, and gives the
# median of every run and its CPU share beside, for the benchmarks that
# wait by design. Benchmarks of one goroutine run at -cpu 1 only.
# With BASE set to a git revision, the Next benchmarks of that revision
# are measured in the same rounds.
#   ROUNDS (default 8)   BENCHTIME (default 0.5s)   IDLE (default 93)
#   NCPU (default nproc) BASE (default none)        WAIT (default 3600: seconds to wait for idle rounds)
#   RAW (default none: a file to keep every run's line in: rev package benchmark cpu ns/op allocs/op CPU%)
set -euo pipefail

cd "$(dirname "$0")/.."

GO=${GO:-go}
ROUNDS=${ROUNDS:-8}
BENCHTIME=${BENCHTIME:-0.5s}
IDLE=${IDLE:-93}
NCPU=${NCPU:-$(nproc)}
BASE=${BASE:-}
WAIT=${WAIT:-3600}
RAW=${RAW:-}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "==> building the test binaries"
for pkg in client segment; do
	"$GO" test -c -o "$tmp/new_$pkg.test" "./$pkg/"
done
if [[ -n "$BASE" ]]; then
	mkdir "$tmp/base"
	git archive "$BASE" | tar -x -C "$tmp/base"
	for pkg in client segment; do
		(cd "$tmp/base" && "$GO" test -c -o "$tmp/base_$pkg.test" "./$pkg/")
	done
fi

runs=(
	"new client AtomicAdd" "new client AtomicAddParallel" "new client Next" "new client NextParallel"
	"new client SourceNext" "new client SourceNextParallel"
	"new client NextParallelMaxRange" "new client SourceNextParallelMaxRange"
	"new segment BaselineAtomicAdd" "new segment BaselineAtomicAddParallel" "new segment Next" "new segment NextParallel"
	"new segment SourceNext" "new segment SourceNextParallel"
)
if [[ -n "$BASE" ]]; then
	runs+=("base client Next" "base client NextParallel" "base segment Next" "base segment NextParallel")
fi

# idle prints the share of CPU time (%) the machine left idle over a second.
idle() {
	local a b
	read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ </proc/stat
	sleep 1
	read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ </proc/stat
	a=$(((i2 + w2) - (i1 + w1)))
	b=$(((u2 + n2 + s2 + i2 + w2 + q2 + sq2 + st2) - (u1 + n1 + s1 + i1 + w1 + q1 + sq1 + st1)))
	echo $((100 * a / (b > 0 ? b : 1)))
}

results="$tmp/results"
: >"$results"
deadline=$(($(date +%s) + WAIT))
round=0
while ((round < ROUNDS)); do
	if (($(date +%s) > deadline)); then
		echo "gave up waiting for an idle machine after ${WAIT}s, with ${round} rounds" >&2
		break
	fi
	if (($(idle) < IDLE)); then
		sleep 5
		continue
	fi
	round=$((round + 1))
	echo "==> round ${round} of ${ROUNDS}"
	for r in "${runs[@]}"; do
		read -r rev pkg name <<<"$r"
		cpus=(1)
		[[ "$name" != *Parallel* ]] || cpus+=("$NCPU")
		for cpu in "${cpus[@]}"; do
			out=$(cd "$pkg" && { TIMEFORMAT='CPU %P'; time "$tmp/${rev}_$pkg.test" -test.run '^$' \
				-test.bench "^Benchmark${name}\$" -test.cpu "$cpu" -test.benchtime "$BENCHTIME" -test.benchmem; } 2>&1)
			ns=$(awk '/^Benchmark/ {print $3}' <<<"$out")
			allocs=$(awk '/^Benchmark/ {print $7}' <<<"$out")
			share=$(awk '/^CPU/ {print $2}' <<<"$out")
			[[ -n "$ns" ]] || { echo "no result for $r at -cpu $cpu:" >&2; echo "$out" >&2; exit 1; }
			echo "$rev $pkg $name $cpu $ns $allocs $share" >>"$results"
		done
	done
done

echo
echo "==> medians, $(date -u +%F),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), ${NCPU} CPUs"
echo "    kept: the runs that had their cores (a CPU share of at least 90% of each goroutine's core);"
echo "    all: every run, and the median CPU share, for benchmarks that wait (for ranges) by design"
printf '%-5s %-8s %-27s %3s %9s %7s %7s %12s %10s   %s\n' rev package benchmark cpu 'ns/op' 'ids/s' allocs 'all: ns/op' 'CPU share' 'kept runs (ns/op)'
awk '
{
	key = $1 " " $2 " " $3 " " $4
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	all[key] = all[key] " " $5; share[key] = share[key] " " $7; runs[key]++
	want = ($3 ~ /Parallel/ ? $4 : 1) * 90
	if ($7 >= want) { kept[key] = kept[key] " " $5; k[key]++ }
	allocs[key] = $6
}
function median(list,    v, m, i, j, t) {
	m = split(list, v, " ")
	for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
END {
	for (i = 1; i <= n; i++) {
		key = order[i]; split(key, f, " ")
		km = k[key] ? sprintf("%9.3f %6.0fM", median(kept[key]), 1000 / median(kept[key])) : sprintf("%9s %7s", "-", "-")
		printf "%-5s %-8s %-27s %3s %s %7s %12.3f %9.0f%%   %d of %d:%s\n", f[1], f[2], f[3], f[4], km, allocs[key], median(all[key]), median(share[key]), k[key], runs[key], kept[key]
	}
}' "$results"
[[ -z "$RAW" ]] || cp "$results" "$RAW"
