#!/usr/bin/env bash
# One leaf serve on MySQL with many tags (bench/cmd/manytags): for 1,000,
# 10,000 and 100,000 tags, the time 64 concurrent clients take to ask for
# every tag once (each a first load from the database), the same requests
# again once all are loaded, the RSS per loaded tag, and the CPU the idle
# instance uses over 65 s, which hold one read of the tag list.
# Builds bin/leaf; each run creates a database of its own on the server (or,
# with STORES, a set of several databases on it) and
# drops it after.
#   MYSQL_DSN  server DSN without a database (default root@tcp(127.0.0.1:3306)/)
#   TAGS       comma-separated counts (default 1000,10000,100000)
#   ROUNDS     runs per count, the median shown (default 3)
#   CLIENTS    concurrent clients (default 64)
#   IDLE       idle window (default 65s)      PORT (default 18090)
#   STORES     comma-separated counts of stores, each run in every round:
#              1 is one database, 3 a set of three on the same server
#              (default 1)
set -euo pipefail

cd "$(dirname "$0")/.."

make build
cd bench
go run ./cmd/manytags -leaf ../bin/leaf \
	-dsn "${MYSQL_DSN:-root@tcp(127.0.0.1:3306)/}" \
	-tags "${TAGS:-1000,10000,100000}" \
	-rounds "${ROUNDS:-3}" \
	-clients "${CLIENTS:-64}" \
	-idle "${IDLE:-65s}" \
	-port "${PORT:-18090}" \
	-stores "${STORES:-1}"
