#!/bin/bash
# Entry point of the MySQL image: on an empty data directory, initializes
# it from the variables of the official image — MYSQL_ROOT_PASSWORD,
# MYSQL_ALLOW_EMPTY_PASSWORD, MYSQL_RANDOM_ROOT_PASSWORD, MYSQL_DATABASE,
# MYSQL_USER and MYSQL_PASSWORD — and the scripts in
# /docker-entrypoint-initdb.d; then runs the server as user mysql.
set -euo pipefail

log() { printf '%s [entrypoint] %s\n' "$(date -u +%FT%TZ)" "$*" >&2; }

if [[ "${1:-}" == -* ]]; then
	set -- mysqld "$@"
fi
if [[ "$1" != mysqld ]]; then
	exec "$@"
fi

datadir=/var/lib/mysql
socket=/run/mysqld/init.sock
install -d -o mysql -g mysql /run/mysqld "$datadir"

if [[ ! -d $datadir/mysql ]]; then
	root_password=${MYSQL_ROOT_PASSWORD:-}
	empty=${MYSQL_ALLOW_EMPTY_PASSWORD:-}
	random=${MYSQL_RANDOM_ROOT_PASSWORD:-}
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
	mysqld --initialize-insecure --user=mysql --datadir="$datadir" --log-error-verbosity=1 2>/dev/null
	# A server of its own for the set-up: no network and another socket,
	# so that neither clients nor the health check take it for the real
	# one.
	mysqld --user=mysql --datadir="$datadir" --skip-networking --socket="$socket" --log-error-verbosity=1 &
	pid=$!
	for ((i = 0; i < 120; i++)); do
		mysqladmin --socket="$socket" -uroot ping >/dev/null 2>&1 && break
		kill -0 "$pid" 2>/dev/null || { log "the set-up server stopped"; exit 1; }
		sleep 0.5
	done
	sql() { mysql --socket="$socket" -uroot --binary-mode "$@"; }
	quote() { printf "'%s'" "${1//\'/\'\'}"; }
	db=${MYSQL_DATABASE:-} user=${MYSQL_USER:-} password=${MYSQL_PASSWORD:-}
	{
		echo "SET @@SESSION.SQL_LOG_BIN=0;"
		pw=$(quote "$root_password")
		echo "ALTER USER 'root'@'localhost' IDENTIFIED BY $pw;"
		echo "CREATE USER 'root'@'%' IDENTIFIED BY $pw;"
		echo "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
		if [[ -n $db ]]; then
			echo "CREATE DATABASE IF NOT EXISTS \`${db//\`/\`\`}\`;"
		fi
		if [[ -n $user && $user != root ]]; then
			echo "CREATE USER $(quote "$user")@'%' IDENTIFIED BY $(quote "$password");"
			[[ -z $db ]] || echo "GRANT ALL ON \`${db//\`/\`\`}\`.* TO $(quote "$user")@'%';"
		fi
	} | sql
	export MYSQL_PWD=$root_password
	for f in /docker-entrypoint-initdb.d/*; do
		[[ -e $f ]] || continue
		case "$f" in
		*.sh) log "running $f"; . "$f" ;;
		*.sql) log "running $f"; mysql --socket="$socket" -uroot ${db:+"$db"} <"$f" ;;
		*.sql.gz) log "running $f"; gunzip -c "$f" | mysql --socket="$socket" -uroot ${db:+"$db"} ;;
		*) log "ignoring $f" ;;
		esac
	done
	unset MYSQL_PWD
	kill "$pid"
	wait "$pid" || true
	log "initialized"
fi

exec "$@" --user=mysql
