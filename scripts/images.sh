#!/usr/bin/env bash
# Builds, from Debian's packages alone, the images that the container tests
# and the local compose files use where no registry can be reached (make
# images; docs/containers.md):
#
#   leaf-local/debian:bookworm   debootstrap's minimal Debian, with CA
#                                certificates and time zones
#   leaf-local/mariadb:10.11     MariaDB and Galera, with the official
#                                images' variables and a health check
#                                (deploy/images/mariadb), for mysql:8.4
#   leaf-local/mysql:9.7         Oracle's MySQL 9.7 from Debian's unstable
#                                suite (the root scripts/mysql-root.sh
#                                makes), with the official image's
#                                variables and a health check
#                                (deploy/images/mysql), for mysql:9.7
#   leaf-local/golang:1.26       this machine's Go toolchain and trusted
#                                CAs on Debian (deploy/images/golang), for
#                                golang:1.26-bookworm
#   leaf-local/static:nonroot    no shell, user 65532, CA certificates and
#                                time zones (deploy/images/static), for
#                                gcr.io/distroless/static-debian12:nonroot
#
# Each image carries the digest of its inputs in the label org.leafid.inputs
# and is built again only when they change. Needs root, a Docker engine,
# debootstrap, and Debian's mirror (DEBIAN_MIRROR); builds that fetch
# packages use the host's network (docker build --network=host), the
# containers of the tests never do.
set -euo pipefail

cd "$(dirname "$0")/.."

SUITE=${DEBIAN_SUITE:-bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${LEAF_IMAGES_CACHE:-/var/cache/leaf-images}
DOCKER=${DOCKER:-docker}
GOROOT_DIR=${GOROOT_DIR:-$(go env GOROOT)}

DEBIAN_IMAGE=leaf-local/debian:$SUITE
MARIADB_IMAGE=leaf-local/mariadb:10.11
MYSQL_ROOT_IMAGE=leaf-local/mysql-root:9.7
MYSQL_IMAGE=leaf-local/mysql:9.7
MYSQL_ROOT=${LEAF_MYSQL_ROOT:-/var/cache/leaf-images/mysql-9.7}
GOLANG_IMAGE=leaf-local/golang:1.26
STATIC_IMAGE=leaf-local/static:nonroot
LABEL=org.leafid.inputs

log() { printf '==> images: %s\n' "$*"; }

# digest FILE... and strings on stdin: the inputs' sha256.
digest() { { cat; cat "$@"; } | sha256sum | cut -c1-16; }

# current IMAGE KEY: whether IMAGE exists, built from the inputs KEY.
current() {
	[[ "$($DOCKER image inspect -f "{{index .Config.Labels \"$LABEL\"}}" "$1" 2>/dev/null)" == "$2" ]]
}

started=$SECONDS

# --- Debian -------------------------------------------------------------
debian_key=$(printf 'debian %s %s minbase ca-certificates,tzdata\n' "$SUITE" "$MIRROR" | digest)
if current "$DEBIAN_IMAGE" "$debian_key"; then
	log "$DEBIAN_IMAGE is current"
else
	log "$DEBIAN_IMAGE: debootstrap $SUITE from $MIRROR"
	command -v debootstrap >/dev/null 2>&1 || { echo "images: debootstrap not found (apt-get install debootstrap)" >&2; exit 1; }
	mkdir -p "$CACHE/debs"
	root=$(mktemp -d "$CACHE/rootfs.XXXXXX")
	trap 'rm -rf "$root"' EXIT
	debootstrap --variant=minbase --include=ca-certificates,tzdata \
		--cache-dir="$CACHE/debs" "$SUITE" "$root" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
		|| { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
	rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
	tar -C "$root" -c . | $DOCKER import \
		--change "LABEL $LABEL=$debian_key" \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'CMD ["bash"]' - "$DEBIAN_IMAGE" >/dev/null
	# The static image is cut from this root: keep what it takes.
	rm -rf "$CACHE/static-parts" && mkdir -p "$CACHE/static-parts"
	cp "$root/etc/ssl/certs/ca-certificates.crt" "$CACHE/static-parts/"
	cp -a "$root/usr/share/zoneinfo" "$CACHE/static-parts/"
	rm -rf "$root"
	trap - EXIT
fi

# --- MariaDB ------------------------------------------------------------
mariadb_key=$(echo "$debian_key" | digest deploy/images/mariadb/*)
if current "$MARIADB_IMAGE" "$mariadb_key"; then
	log "$MARIADB_IMAGE is current"
else
	log "$MARIADB_IMAGE: Debian's mariadb-server and galera-4"
	$DOCKER build -q --force-rm --network=host --build-arg BASE="$DEBIAN_IMAGE" \
		--label "$LABEL=$mariadb_key" -t "$MARIADB_IMAGE" deploy/images/mariadb >/dev/null
fi

# --- MySQL --------------------------------------------------------------
bash scripts/mysql-root.sh
mysql_root_key=$(digest "$MYSQL_ROOT/.inputs" </dev/null)
if current "$MYSQL_ROOT_IMAGE" "$mysql_root_key"; then
	log "$MYSQL_ROOT_IMAGE is current"
else
	log "$MYSQL_ROOT_IMAGE: the root of $MYSQL_ROOT"
	# Not the directories the tests make in the root's /srv.
	tar -C "$MYSQL_ROOT" --exclude='./srv/*' -c . | $DOCKER import \
		--change "LABEL $LABEL=$mysql_root_key" \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'CMD ["bash"]' - "$MYSQL_ROOT_IMAGE" >/dev/null
fi
mysql_key=$(echo "$mysql_root_key" | digest deploy/images/mysql/*)
if current "$MYSQL_IMAGE" "$mysql_key"; then
	log "$MYSQL_IMAGE is current"
else
	log "$MYSQL_IMAGE: the entry point and health check on $MYSQL_ROOT_IMAGE"
	$DOCKER build -q --force-rm --build-arg BASE="$MYSQL_ROOT_IMAGE" \
		--label "$LABEL=$mysql_key" -t "$MYSQL_IMAGE" deploy/images/mysql >/dev/null
fi

# --- Go -----------------------------------------------------------------
go_version=$("$GOROOT_DIR/bin/go" env GOVERSION)
# The machine's trust store goes with its toolchain: go mod download in
# the build stage reaches the module proxy the way this machine does
# (through a proxy of its own, if its CAs say so).
HOST_CAS=${HOST_CAS:-/etc/ssl/certs/ca-certificates.crt}
golang_key=$(echo "$debian_key $go_version" | digest deploy/images/golang/Dockerfile "$HOST_CAS")
if current "$GOLANG_IMAGE" "$golang_key"; then
	log "$GOLANG_IMAGE is current"
else
	log "$GOLANG_IMAGE: $go_version from $GOROOT_DIR"
	# The context: the Dockerfile, the trust store and the toolchain as go/.
	tar -c -C deploy/images/golang Dockerfile -C "$(dirname "$HOST_CAS")" \
		--transform "s,^$(basename "$HOST_CAS")\$,ca-certificates.crt," "$(basename "$HOST_CAS")" \
		-C "$(dirname "$GOROOT_DIR")" \
		--transform "s,^$(basename "$GOROOT_DIR"),go," "$(basename "$GOROOT_DIR")" |
		$DOCKER build -q --force-rm --build-arg BASE="$DEBIAN_IMAGE" \
			--label "$LABEL=$golang_key" -t "$GOLANG_IMAGE" - >/dev/null
fi

# --- static -------------------------------------------------------------
static_key=$(echo "$debian_key" | digest deploy/images/static/*)
if current "$STATIC_IMAGE" "$static_key"; then
	log "$STATIC_IMAGE is current"
else
	log "$STATIC_IMAGE: no shell, user 65532"
	parts=$CACHE/static-parts
	if [[ ! -s $parts/ca-certificates.crt || ! -d $parts/zoneinfo ]]; then
		# The Debian image came from an earlier run: take the parts from it.
		rm -rf "$parts" && mkdir -p "$parts"
		ctr=$($DOCKER create "$DEBIAN_IMAGE")
		$DOCKER cp "$ctr:/etc/ssl/certs/ca-certificates.crt" "$parts/"
		$DOCKER cp "$ctr:/usr/share/zoneinfo" "$parts/"
		$DOCKER rm "$ctr" >/dev/null
	fi
	root=$(mktemp -d "$CACHE/static.XXXXXX")
	trap 'rm -rf "$root"' EXIT
	install -d "$root/etc/ssl/certs" "$root/usr/share" "$root/home/nonroot" "$root/root"
	install -d -m 1777 "$root/tmp"
	chown 65532:65532 "$root/home/nonroot"
	install -m 644 deploy/images/static/passwd deploy/images/static/group deploy/images/static/nsswitch.conf "$root/etc/"
	cp "$parts/ca-certificates.crt" "$root/etc/ssl/certs/"
	cp -a "$parts/zoneinfo" "$root/usr/share/"
	tar -C "$root" --numeric-owner -c . | $DOCKER import \
		--change "LABEL $LABEL=$static_key" \
		--change 'USER 65532:65532' \
		--change 'WORKDIR /home/nonroot' \
		--change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' - "$STATIC_IMAGE" >/dev/null
	rm -rf "$root"
	trap - EXIT
fi

log "done in $((SECONDS - started)) s: $DEBIAN_IMAGE $MARIADB_IMAGE $MYSQL_IMAGE $GOLANG_IMAGE $STATIC_IMAGE"
