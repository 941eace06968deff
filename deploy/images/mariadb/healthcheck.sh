#!/bin/bash
# Health check of the MariaDB image: the server answers a query over TCP
# (not the set-up server, which has no network), and a Galera node is
# synced with its cluster.
set -euo pipefail
MYSQL_PWD=${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}
export MYSQL_PWD
q() { mariadb --protocol=tcp -h127.0.0.1 -P3306 -uroot --connect-timeout=2 -N -B -e "$1"; }
[[ "$(q 'SELECT @@GLOBAL.wsrep_on')" == 0 ]] && exit 0
[[ "$(q "SHOW GLOBAL STATUS LIKE 'wsrep_ready'" | cut -f2)" == ON ]]
