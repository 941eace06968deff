#!/usr/bin/env bash
# Runs the tests that use a MySQL server (storetest.MySQL) against Oracle's
# MySQL 9.7: a server started for them from the root scripts/mysql-root.sh
# builds (entered with chroot), on a free loopback port, stopped and
# removed at the end whatever the outcome. The packages are the
# arguments.
#
#   LEAF_MYSQL_ROOT  the root (default /var/cache/leaf-images/mysql-9.7)
#   GO               the go command (default go)
set -euo pipefail

ROOT=${LEAF_MYSQL_ROOT:-/var/cache/leaf-images/mysql-9.7}
GO=${GO:-go}
[[ -x $ROOT/usr/sbin/mysqld ]] || { echo "mysql-tests: no mysqld in $ROOT (make mysql-root)" >&2; exit 1; }
(($# > 0)) || { echo "mysql-tests: no packages given" >&2; exit 1; }

dir=$(mktemp -d "$ROOT/srv/ci-XXXXXX")
inside=/srv/$(basename "$dir")
pid=
cleanup() {
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" && for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT

# A free port below the ephemeral range.
port=
for p in $(shuf -i 20000-30000 -n 50); do
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[[ -n $port ]] || { echo "mysql-tests: no free port" >&2; exit 1; }

cat >"$dir/my.cnf" <<CNF
[mysqld]
datadir=$inside/data
socket=$inside/mysqld.sock
pid-file=$inside/mysqld.pid
log-error=$inside/mysqld.log
port=$port
bind-address=127.0.0.1
mysqlx=OFF
secure-file-priv=
innodb_buffer_pool_size=128M
max_connections=500
CNF
chroot "$ROOT" /usr/sbin/mysqld --defaults-file="$inside/my.cnf" --user=root --initialize-insecure
chroot "$ROOT" /usr/sbin/mysqld --defaults-file="$inside/my.cnf" --user=root &
pid=$!
for _ in $(seq 120); do
	if chroot "$ROOT" mysql --protocol=tcp -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' >/dev/null 2>&1; then break; fi
	kill -0 "$pid" 2>/dev/null || { tail -20 "$dir/mysqld.log" >&2; exit 1; }
	sleep 0.5
done
echo "mysql-tests: $(chroot "$ROOT" mysqld --version) on 127.0.0.1:$port"
LEAF_TEST_MYSQL_DSN="root@tcp(127.0.0.1:$port)/?parseTime=true" $GO test -count=1 "$@"
