#!/bin/bash
# Health check of the MariaDB image: the server answers over TCP (not the
# set-up server, which has no network), and a Galera node is ready. The
# queries go through the socket as root, which the container's root may
# use without a password, so the check needs none of the variables.
set -euo pipefail
mariadb-admin --protocol=tcp -h127.0.0.1 -P3306 --connect-timeout=2 ping >/dev/null
q() { mariadb --protocol=socket -uroot -N -B -e "$1"; }
[[ "$(q 'SELECT @@GLOBAL.wsrep_on')" == 0 ]] && exit 0
[[ "$(q "SHOW GLOBAL STATUS LIKE 'wsrep_ready'" | cut -f2)" == ON ]]
