# syntax=docker/dockerfile:1
# Build: make docker   (or: docker build --build-arg VERSION=$(cat VERSION) -t leaf .)

FROM golang:1.26-bookworm AS build
WORKDIR /src
ARG VERSION=dev

COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/leaf ./cmd/leaf \
 && mkdir -p /out/data

# distroless has no shell, so /data is created in the build stage and copied
# with the ownership of the image's nonroot user (uid/gid 65532).
FROM gcr.io/distroless/static-debian12:nonroot
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
