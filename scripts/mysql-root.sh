#!/usr/bin/env bash
# Builds, from Debian's packages alone, a root holding Oracle's MySQL
# server (mysql-server-core of Debian's unstable suite, with the Group
# Replication, clone and semi-sync plugins) and its client, for the tests
# that run MySQL beside MariaDB: the fault suite's Group Replication and
# replica scenarios (internal/mysqltest) start mysqld in it with chroot,
# and make images imports it as leaf-local/mysql:9.7. This machine's own
# packages are never touched: the root is a debootstrap of its own.
#
# The root is built again only when its inputs change (the file .inputs in
# it). Needs root, debootstrap and Debian's mirror (DEBIAN_MIRROR).
#
#   LEAF_MYSQL_ROOT  where the root goes (default
#                    /var/cache/leaf-images/mysql-9.7)
set -euo pipefail

ROOT=${LEAF_MYSQL_ROOT:-/var/cache/leaf-images/mysql-9.7}
SUITE=${MYSQL_SUITE:-sid}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES="mysql-server-core mysql-client-core"
# The series the tests are written for: a suite that moved on to another
# is a failure to look at, not a silent change of server.
SERIES=${MYSQL_SERIES:-9.7.}

log() { printf '==> mysql-root: %s\n' "$*"; }

key="$SUITE $MIRROR $PACKAGES $SERIES"
if [[ -x $ROOT/usr/sbin/mysqld && "$(cat "$ROOT/.inputs" 2>/dev/null)" == "$key" ]]; then
	log "$ROOT is current: $(chroot "$ROOT" mysqld --version)"
	exit 0
fi
command -v debootstrap >/dev/null 2>&1 || { echo "mysql-root: debootstrap not found (apt-get install debootstrap)" >&2; exit 1; }
started=$SECONDS
parent=$(dirname "$ROOT")
mkdir -p "$parent/debs-$SUITE"
tmp=$(mktemp -d "$parent/mysql-root.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "debootstrap $SUITE from $MIRROR"
debootstrap --variant=minbase --cache-dir="$parent/debs-$SUITE" "$SUITE" "$tmp" "$MIRROR" >"$parent/mysql-root.log" 2>&1 \
	|| { tail -20 "$parent/mysql-root.log" >&2; exit 1; }
# The mirror's Release file of the unstable suite may have expired.
log "apt-get install $PACKAGES"
chroot "$tmp" env DEBIAN_FRONTEND=noninteractive sh -c \
	"apt-get -qq -o Acquire::Check-Valid-Until=false update && apt-get install -y -qq --no-install-recommends $PACKAGES" \
	>>"$parent/mysql-root.log" 2>&1 || { tail -20 "$parent/mysql-root.log" >&2; exit 1; }
version=$(chroot "$tmp" mysqld --version)
[[ $version == *" Ver $SERIES"* ]] || { echo "mysql-root: $SUITE has $version, not $SERIES" >&2; exit 1; }
rm -rf "$tmp"/var/lib/apt/lists/* "$tmp"/var/cache/apt/archives/*.deb
install -d -m 1777 "$tmp/srv"
echo "$key" >"$tmp/.inputs"
rm -rf "$ROOT"
mv "$tmp" "$ROOT"
trap - EXIT
log "$ROOT: $version, in $((SECONDS - started)) s"
