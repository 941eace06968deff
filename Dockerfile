# Build: make docker   (or: docker build --build-arg VERSION=$(cat VERSION) -t leaf .)
#
# The base images are build arguments whose defaults are the public ones.
# Where no registry is reachable, make images builds stand-ins from Debian's
# packages and `make docker IMAGES=local` passes them (docs/containers.md):
#   --build-arg GO_IMAGE=leaf-local/golang:1.26
#   --build-arg RUNTIME_IMAGE=leaf-local/static:nonroot
# No line needs anything from a registry but those two images; go mod
# download needs the Go module proxy (GOPROXY).
ARG GO_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${GO_IMAGE} AS build
WORKDIR /src
ARG GOPROXY=https://proxy.golang.org,direct

COPY go.mod go.sum ./
RUN go mod download

COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/leaf ./cmd/leaf \
 && mkdir -p /out/data

# The runtime image has no shell, so /data is made in the build stage and
# copied with the ownership of its non-root user (uid/gid 65532).
FROM ${RUNTIME_IMAGE}
COPY --from=build /out/leaf /leaf
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV LEAF_ADDR=:8080 \
    LEAF_SQLITE_PATH=/data/leaf.db
VOLUME /data
EXPOSE 8080
# No HEALTHCHECK: the image has no shell or curl. Probe /healthz and /readyz
# from the orchestrator instead.
ENTRYPOINT ["/leaf"]
CMD ["serve"]
