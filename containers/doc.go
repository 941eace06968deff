// Package containers tests leaf as users run it in containers: the image
// the Dockerfile builds (read-only, as user 65532, stopped by SIGTERM and
// started again on the same volume or database), docker-compose.yml brought
// up, restarted, taken down and up again, and docker-compose.galera.yml's
// three Galera nodes and two leaf instances with a node killed under load.
// Every id taken is kept; none may come twice, and after a restart every
// one is above those before.
//
// It has no code; its tests run when LEAF_TEST_CONTAINERS=1 (make
// containers, docs/containers.md) against a Docker engine on this machine,
// with the docker CLI and Compose (the docker compose plugin, or Debian's
// docker-compose). LEAF_TEST_IMAGES=local takes the images make images
// builds from Debian's packages in place of the public ones, which need a
// registry. Every container, network and volume a test makes carries the
// label org.leafid.test=containers and is removed when the test ends;
// images stay, as a cache.
package containers
