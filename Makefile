# leaf — build, test and packaging entry points.
# `make test` is the test command the README documents; CI runs .ci/run.

GO        ?= go
BINARY    ?= leaf
PKG       ?= ./cmd/leaf
BIN_DIR   ?= bin
# The project's one version (VERSION): leaf version, every client's package,
# the image's label. TestOneVersion holds them to it.
VERSION   ?= $(shell cat VERSION)
LDFLAGS   ?= -X main.version=$(VERSION)

# Extra flags for `go test`, e.g. make test TESTFLAGS='-run TestSegment -v'
TESTFLAGS ?=

# Benchmarks: packages and flags are variables so they are easy to change.
BENCH_PKGS  ?= ./segment/ ./snowflake/
BENCH_FLAGS ?= -run '^$$' -bench . -benchmem -count=5

# Fuzzing: each target runs for FUZZTIME. FUZZ_TARGETS is a space-separated
# list of package:FuzzFunc (e.g. ./segment:FuzzParse); empty = every Fuzz*
# function found in *_test.go files.
FUZZTIME     ?= 20s
FUZZ_TARGETS ?=

IMAGE ?= leaf:$(VERSION)

# Base images (docs/containers.md): the public ones, or with IMAGES=local
# the stand-ins make images builds from Debian's packages, for a machine
# that reaches no registry; testcontainers' reaper, whose image cannot be
# pulled there, is then off.
ifeq ($(IMAGES),local)
MYSQL_IMAGE   ?= leaf-local/mariadb:10.11
MYSQL_IMAGES  ?= leaf-local/mariadb:10.11 leaf-local/mysql:9.7
GO_IMAGE      ?= leaf-local/golang:1.26
RUNTIME_IMAGE ?= leaf-local/static:nonroot
export TESTCONTAINERS_RYUK_DISABLED ?= true
endif
MYSQL_IMAGE   ?= mysql:8.4
# The servers the tests of MYSQL_PKGS run on in make containers, one
# container of each in turn.
MYSQL_IMAGES  ?= mysql:8.4 mysql:9.7
GO_IMAGE      ?= golang:1.26-bookworm
RUNTIME_IMAGE ?= gcr.io/distroless/static-debian12:nonroot

# The packages whose tests run against MySQL (storetest.MySQL), but the
# fault suite's, whose scenarios kill and cut the servers they run on.
MYSQL_PKGS ?= $(shell grep -rl --include='*_test.go' 'storetest\.MySQL' . | xargs -n1 dirname | sort -u | grep -vx './faults')

# Compose validator: the `docker compose` plugin when it works, otherwise the
# standalone `docker-compose` (Debian package docker-compose). `config -q`
# only parses and validates the file; it needs no Docker engine.
COMPOSE ?= $(shell if docker compose version >/dev/null 2>&1; then echo 'docker compose'; \
	elif command -v docker-compose >/dev/null 2>&1; then echo docker-compose; fi)

# promtool, from Debian's prometheus package, checks the files in deploy/.
PROMTOOL ?= promtool

.PHONY: all build run test bench fuzz lint tidy-check compose-check deploy-check docker images containers generated-clients clean

all: lint test build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/$(BINARY) $(PKG)

run:
	$(GO) run -ldflags "$(LDFLAGS)" $(PKG) serve

# The Go tests hold the conformance suite of the clients (clients/conformance),
# which runs each client's driver whose toolchain is present; then the
# clients' own tests.
test:
	$(GO) test -race -count=1 $(TESTFLAGS) ./...
	$(MAKE) --no-print-directory clients-test

bench:
	$(GO) test $(BENCH_FLAGS) $(BENCH_PKGS)

# The clients of other languages (clients/, docs/clients.md). `make clients`
# builds and tests each one whose toolchain is present: the Python client's
# unit tests, its types (`mypy --strict` on the package and on a typed user's
# file) and `pip install ./clients/python` into a fresh venv with no package
# index; the TypeScript client built with its pinned typescript (checking that
# the committed dist/ is what src/ compiles to), its tests, `npm pack` holding
# its README and LICENSE, and `npm install ./clients/typescript` into an empty
# project; the Java client (clients/java/Makefile) built by Maven from Debian's
# packages: compiled, tested, its Javadoc checked, its jar, sources and
# javadoc jars. clients-test runs the unit tests and the Python types (make
# test runs it). A toolchain missing is a message, and a failure under
# CI=true.
PYTHON ?= python3
MYPY   ?= mypy
NODE   ?= node
NPM    ?= npm

.PHONY: clients clients-test clients-python clients-python-test clients-python-types clients-typescript clients-typescript-test clients-java clients-java-test
clients: clients-python clients-typescript clients-java
clients-test: clients-python-test clients-python-types clients-typescript-test clients-java-test

# missing TOOL: say a toolchain is missing; fail under CI=true.
missing = { echo "$@: $(1) not found: the client is not checked"; [ "$$CI" != true ]; }

clients-python-test:
	@if ! command -v $(PYTHON) >/dev/null 2>&1; then $(call missing,$(PYTHON)); exit $$?; fi; \
	$(PYTHON) -m unittest discover -s clients/python/tests

# The package and a typed user's file (clients/python/tests/typed), under
# Debian's mypy: every call a user makes has the package's types, none Any.
clients-python-types:
	@if ! command -v $(MYPY) >/dev/null 2>&1; then $(call missing,$(MYPY) (Debian: apt-get install mypy)); exit $$?; fi; \
	MYPYPATH=clients/python/src $(MYPY) --strict --no-error-summary clients/python/src/leaf_client clients/python/tests/typed/user.py && \
	echo "mypy --strict: leaf_client and a typed user's file are clean"

clients-python: clients-python-test clients-python-types
	@if ! command -v $(PYTHON) >/dev/null 2>&1; then $(call missing,$(PYTHON)); exit $$?; fi; \
	tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	$(PYTHON) -m venv "$$tmp/venv" && \
	"$$tmp/venv/bin/pip" install -q --no-index ./clients/python && \
	"$$tmp/venv/bin/python" -c 'import leaf_client; print("pip install ./clients/python: leaf_client", leaf_client.__version__)'

clients-typescript-test:
	@if ! command -v $(NODE) >/dev/null 2>&1; then $(call missing,$(NODE)); exit $$?; fi; \
	cd clients/typescript && $(NODE) --test test/

clients-typescript:
	@if ! command -v $(NPM) >/dev/null 2>&1; then $(call missing,$(NPM)); exit $$?; fi; \
	cd clients/typescript && $(NPM) ci --no-audit --no-fund --loglevel=error && $(NPM) run --silent build && \
	{ git diff --exit-code --stat -- dist || { echo "clients/typescript/dist differs from what src/ compiles to: run make clients and commit"; exit 1; }; } && \
	$(NODE) --test test/ && \
	packed="$$($(NPM) pack --dry-run --json 2>/dev/null)" && \
	for f in README.md LICENSE package.json dist/index.js dist/index.d.ts; do \
		printf '%s' "$$packed" | grep -q "\"path\": \"$$f\"" || { echo "npm pack ships no $$f"; exit 1; }; done && \
	tmp="$$(mktemp -d)" && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	$(NPM) init -y >/dev/null && $(NPM) install --no-audit --no-fund --loglevel=error "$(CURDIR)/clients/typescript" && \
	$(NODE) --input-type=module -e 'import { Client } from "leaf-client"; console.log("npm install ./clients/typescript: leaf-client", typeof Client)'

clients-java-test:
	@$(MAKE) --no-print-directory -C clients/java test

clients-java:
	@$(MAKE) --no-print-directory -C clients/java

# cmd/leaf/default.pgo: the CPU profile go build optimizes leaf for (PGO),
# taken anew from leaf serve under wrk on the id routes.
.PHONY: pgo
pgo:
	bash scripts/pgo.sh

fuzz:
	FUZZTIME='$(FUZZTIME)' FUZZ_TARGETS='$(FUZZ_TARGETS)' GO='$(GO)' bash scripts/fuzz.sh

# What CI fuzzes: the HTTP edge and the Connect edge of the gRPC API of two
# instances over one in-memory database (docs/testing.md, Fuzzing), each for
# a short while; every target's seeds also run in make test.
.PHONY: fuzz-short
fuzz-short:
	FUZZTIME=30s FUZZ_TARGETS='./httpapi:FuzzHTTP ./grpcapi:FuzzConnect' GO='$(GO)' bash scripts/fuzz.sh

# The fault suite (faults/): real leaf processes and MariaDB servers, killed,
# cut off, failed over, and a 3-node Galera cluster, a MySQL 9.7 server and
# a 3-member Group Replication group (mysql-root), and the alert rules in a
# real Prometheus server, and network partitions between network namespaces;
# figures in RELIABILITY.md. Needs root and Debian's mariadb-server, galera-4,
# rsync, prometheus, iproute2 and nftables. faults-short is what CI
# runs. LEAF_GALERA_RUNS=20 repeats the Galera scenario.
# Oracle's MySQL (scripts/mysql-root.sh): a root holding Debian's MySQL
# 9.7 from its unstable suite, for the fault suite's MySQL and Group
# Replication scenarios and for test-mysql. Needs root and Debian's
# mirror; built again only when its inputs change.
.PHONY: mysql-root test-mysql
mysql-root:
	bash scripts/mysql-root.sh

# The tests of MYSQL_PKGS (but the clients' conformance suite, which
# exercises the clients, not the database) against a MySQL 9.7 server
# started for them from that root: make test runs them on MariaDB 10.11.
MYSQL97_PKGS ?= $(filter-out ./clients/conformance,$(MYSQL_PKGS))
test-mysql: mysql-root
	GO='$(GO)' bash scripts/mysql-tests.sh -skip '$(OWN_SERVERS)' $(TESTFLAGS) $(MYSQL97_PKGS)

# Tests that start servers of their own whatever LEAF_TEST_MYSQL_DSN says:
# make test runs them; the runs of MYSQL_PKGS on other servers skip them.
OWN_SERVERS ?= ^(TestGroupReplication|TestRestartCrashLoop)$$

.PHONY: faults faults-short
faults: mysql-root
	LEAF_FAULTS=full LEAF_TEST_GALERA=$${LEAF_TEST_GALERA:-1} $(GO) test -count=1 -v -timeout 90m $(TESTFLAGS) ./faults/

faults-short: mysql-root
	LEAF_FAULTS=short LEAF_TEST_GALERA=$${LEAF_TEST_GALERA:-1} $(GO) test -count=1 -v -timeout 30m $(TESTFLAGS) ./faults/

lint:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (run gofmt -w):"; \
		echo "$$unformatted"; \
		exit 1; \
	fi
	$(GO) vet ./...

tidy-check:
	$(GO) mod tidy -diff

# The gRPC API (proto/): buf, protoc-gen-go and protoc-gen-connect-go are Go
# tools pinned in go.mod, so no plugin comes from the network. `make proto`
# regenerates the code; proto-check lints and checks the format of the
# .proto files and fails if the generated code in the tree is not what they
# generate now.
.PHONY: proto proto-check
proto:
	$(GO) tool buf format -w
	$(GO) tool buf lint
	$(GO) tool buf generate

proto-check:
	$(GO) tool buf lint
	$(GO) tool buf format -d --exit-code
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) tool buf generate -o "$$tmp" && \
	if diff -r -x '*.proto' proto "$$tmp/proto"; then echo "proto-check: the generated code is current"; \
	else echo "proto-check: the generated code differs from what proto/ generates: run make proto and commit"; exit 1; fi

compose-check:
	@if [ -z "$(COMPOSE)" ]; then \
		echo "compose-check: neither 'docker compose' nor 'docker-compose' is available"; \
		echo "  (Debian: apt-get install docker-compose)"; \
		exit 1; \
	fi
	$(COMPOSE) -f docker-compose.yml config -q
	$(COMPOSE) -f docker-compose.yml -f docker-compose.local.yml config -q
	$(COMPOSE) -f docker-compose.galera.yml config -q
	@echo "docker-compose.yml, with docker-compose.local.yml, and docker-compose.galera.yml are valid ($(COMPOSE))"

# The files users deploy (deploy/): the alert rules checked and their unit
# tests run by promtool, then the Go tests in deploy/, which have promtool
# parse every dashboard query and check the Kubernetes manifest (CI=true
# makes them fail rather than skip without promtool).
deploy-check:
	@command -v $(PROMTOOL) >/dev/null 2>&1 || { \
		echo "deploy-check: $(PROMTOOL) not found (Debian: apt-get install prometheus)"; exit 1; }
	$(PROMTOOL) check rules deploy/prometheus/leaf-alerts.yml
	cd deploy/prometheus && $(PROMTOOL) test rules leaf-alerts_test.yml
	CI=true PROMTOOL='$(PROMTOOL)' $(GO) test -count=1 ./deploy/...

docker:
	docker build --force-rm --network=host --build-arg VERSION=$(VERSION) \
		--build-arg GO_IMAGE=$(GO_IMAGE) --build-arg RUNTIME_IMAGE=$(RUNTIME_IMAGE) -t $(IMAGE) .

# The stand-ins for the public images, from Debian's packages
# (scripts/images.sh); each is built again only when its inputs change.
images:
	bash scripts/images.sh

# What runs in containers (docs/containers.md): the tests of MYSQL_PKGS
# against a container of each of MYSQL_IMAGES in turn, started by
# testcontainers-go (not a local server: LEAF_TEST_MYSQL_DSN is dropped),
# then containers/: the image built and run, the compose stacks brought
# up, restarted and a Galera node killed under load, on MYSQL_IMAGE. CI
# runs make containers IMAGES=local.
containers: $(if $(filter local,$(IMAGES)),images)
	status=0; \
	for image in $(MYSQL_IMAGES); do \
		echo "==> the MySQL tests on $$image"; \
		env -u LEAF_TEST_MYSQL_DSN LEAF_TEST_MYSQL_IMAGE="$$image" $(GO) test -count=1 -skip '$(OWN_SERVERS)' $(TESTFLAGS) $(MYSQL_PKGS) || status=1; \
		left="$$(docker ps -aq --filter label=org.leafid.test=storetest)"; \
		if [ -n "$$left" ]; then docker rm -f -v $$left >/dev/null; fi; \
	done; \
	exit $$status
	LEAF_TEST_CONTAINERS=1 LEAF_TEST_IMAGES='$(IMAGES)' LEAF_TEST_MYSQL_IMAGE='$(MYSQL_IMAGE)' \
	LEAF_TEST_GO_IMAGE='$(GO_IMAGE)' LEAF_TEST_RUNTIME_IMAGE='$(RUNTIME_IMAGE)' \
		$(GO) test -count=1 -v -timeout 45m $(TESTFLAGS) ./containers/

# The clients users generate from httpapi/openapi.json (docs/openapi.md):
# ogen and oapi-codegen, pinned in generators/go/go.mod, and
# openapi-typescript with openapi-fetch, pinned in
# generators/typescript/package.json, each run against two leaf instances,
# and the examples of docs/openapi.md that generate a client. The
# generators come from the Go module proxy and the npm registry.
generated-clients:
	LEAF_TEST_GENERATORS=1 $(GO) test -count=1 -v -timeout 20m $(TESTFLAGS) ./generators/

clean:
	rm -rf $(BIN_DIR) coverage.out coverage.html *.coverprofile
	rm -rf generators/go/ogen/leafapi generators/go/oapicodegen/leafapi generators/typescript/node_modules generators/typescript/dist generators/typescript/src/leaf-api.d.ts
