#!/bin/bash
# Health check of the MySQL image: the server answers over TCP (not the
# set-up server, which has no network). mysqladmin ping exits 0 for a
# server that answers even when it refuses the login, so the check needs
# none of the variables.
set -euo pipefail
mysqladmin --protocol=tcp -h127.0.0.1 -P3306 --connect-timeout=2 ping >/dev/null 2>&1
