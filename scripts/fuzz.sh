#!/usr/bin/env bash
# Short fuzz runs, one target at a time (go test -fuzz accepts one target per
# package per run). Used by `make fuzz`.
#   FUZZTIME      duration per target (default 20s)
#   FUZZ_TARGETS  space-separated package:FuzzFunc list; empty = discover
#                 every `func FuzzXxx(` in *_test.go files.
set -euo pipefail

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-20s}
targets=${FUZZ_TARGETS:-}

cd "$(dirname "$0")/.."

if [[ -z "$targets" ]]; then
	while IFS= read -r line; do
		file=${line%%:*}
		name=$(sed -E 's/^[^:]*:func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
		targets+=" ./$(dirname "${file#./}"):$name"
	done < <(grep -rHE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . || true)
fi

if [[ -z "${targets// /}" ]]; then
	echo "fuzz: no fuzz targets found"
	exit 0
fi

for t in $targets; do
	pkg=${t%%:*}
	fn=${t##*:}
	echo "==> fuzz $pkg $fn for $FUZZTIME"
	"$GO" test -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME" "$pkg"
done
