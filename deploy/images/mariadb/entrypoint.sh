#!/bin/bash
# Entry point of the MariaDB image: on an empty data directory, initializes
# it from the variables of the official images — MYSQL_ROOT_PASSWORD,
# MYSQL_ALLOW_EMPTY_PASSWORD, MYSQL_RANDOM_ROOT_PASSWORD, MYSQL_DATABASE,
# MYSQL_USER and MYSQL_PASSWORD, or their MARIADB_ spellings — and the
# scripts in /docker-entrypoint-initdb.d; then runs the server as user mysql.
set -euo pipefail

# var NAME: MARIADB_NAME, else MYSQL_NAME, else empty.
var() {
	local a="MARIADB_$1" b="MYSQL_$1"
	printf '%s' "${!a:-${!b:-}}"
}
log() { printf '%s [entrypoint] %s\n' "$(date -u +%FT%TZ)" "$*" >&2; }

if [[ "${1:-}" == -* ]]; then
	set -- mariadbd "$@"
fi
if [[ "$1" != mariadbd && "$1" != mysqld ]]; then
	exec "$@"
fi

datadir=/var/lib/mysql
socket=/run/mysqld/init.sock
install -d -o mysql -g mysql /run/mysqld "$datadir"

if [[ ! -d $datadir/mysql ]]; then
	root_password=$(var ROOT_PASSWORD)
	empty=$(var ALLOW_EMPTY_PASSWORD)
	[[ -n $empty ]] || empty=$(var ALLOW_EMPTY_ROOT_PASSWORD)
	random=$(var RANDOM_ROOT_PASSWORD)
	if [[ -z $root_password && -z $empty && -z $random ]]; then
		log "the database is uninitialized and no password option is given:"
		log "set one of MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD or MYSQL_RANDOM_ROOT_PASSWORD"
		exit 1
	fi
	if [[ -n $random && -z $root_password ]]; then
		root_password=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
		log "GENERATED ROOT PASSWORD: $root_password"
	fi
	log "initializing $datadir"
	mariadb-install-db --user=mysql --datadir="$datadir" \
		--auth-root-authentication-method=normal --skip-test-db >/dev/null
	# A server of its own for the set-up: no network, another socket, no
	# cluster, so that neither clients nor the health check take it for
	# the real one.
	mariadbd --user=mysql --datadir="$datadir" --skip-networking --socket="$socket" \
		--wsrep-on=OFF --skip-log-error &
	pid=$!
	for ((i = 0; i < 120; i++)); do
		mariadb-admin --socket="$socket" -uroot ping >/dev/null 2>&1 && break
		kill -0 "$pid" 2>/dev/null || { log "the set-up server stopped"; exit 1; }
		sleep 0.5
	done
	sql() { mariadb --socket="$socket" -uroot --binary-mode "$@"; }
	quote() { printf "'%s'" "${1//\'/\'\'}"; }
	db=$(var DATABASE) user=$(var USER) password=$(var PASSWORD)
	{
		echo "SET @@SESSION.SQL_LOG_BIN=0;"
		# mariadb-install-db's other root accounts (127.0.0.1, ::1, the
		# host's name) have no password; root is localhost and '%' alone.
		echo "DELETE FROM mysql.global_priv WHERE User IN ('root', '') AND Host <> 'localhost';"
		echo "FLUSH PRIVILEGES;"
		pw=$(quote "$root_password")
		# root on the socket inside the container (the health check) needs
		# no password; over TCP it does.
		echo "ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD($pw);"
		echo "CREATE USER 'root'@'%' IDENTIFIED BY $pw;"
		echo "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
		if [[ -n $db ]]; then
			echo "CREATE DATABASE IF NOT EXISTS \`${db//\`/\`\`}\`;"
		fi
		if [[ -n $user && $user != root ]]; then
			echo "CREATE USER $(quote "$user")@'%' IDENTIFIED BY $(quote "$password");"
			[[ -z $db ]] || echo "GRANT ALL ON \`${db//\`/\`\`}\`.* TO $(quote "$user")@'%';"
		fi
		echo "FLUSH PRIVILEGES;"
	} | sql
	export MYSQL_PWD=$root_password
	for f in /docker-entrypoint-initdb.d/*; do
		[[ -e $f ]] || continue
		case "$f" in
		*.sh) log "running $f"; . "$f" ;;
		*.sql) log "running $f"; sql -uroot ${db:+"$db"} <"$f" ;;
		*.sql.gz) log "running $f"; gunzip -c "$f" | sql -uroot ${db:+"$db"} ;;
		*) log "ignoring $f" ;;
		esac
	done
	unset MYSQL_PWD
	kill "$pid"
	wait "$pid" || true
	log "initialized"
fi

exec "$@" --user=mysql
