package containers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// label marks what the tests make; TestMain removes what a test killed
// before its cleanup left. Compose projects are named projectPrefix….
const (
	label         = "org.leafid.test=containers"
	projectPrefix = "leafctp"
)

// images are the images the tests run, public or built here.
type images struct {
	golang, runtime, mysql, galera string
	local                          bool // the leaf-local ones of make images
}

// chosen reads LEAF_TEST_IMAGES (local, or the public images) and the
// variables that name one image each.
func chosen() images {
	im := images{
		golang:  "golang:1.26-bookworm",
		runtime: "gcr.io/distroless/static-debian12:nonroot",
		mysql:   "mysql:8.4",
		galera:  "leaf-local/mariadb:10.11",
	}
	if os.Getenv("LEAF_TEST_IMAGES") == "local" {
		im = images{
			golang:  "leaf-local/golang:1.26",
			runtime: "leaf-local/static:nonroot",
			mysql:   "leaf-local/mariadb:10.11",
			galera:  "leaf-local/mariadb:10.11",
			local:   true,
		}
	}
	for env, v := range map[string]*string{
		"LEAF_TEST_GO_IMAGE":      &im.golang,
		"LEAF_TEST_RUNTIME_IMAGE": &im.runtime,
		"LEAF_TEST_MYSQL_IMAGE":   &im.mysql,
		"LEAF_TEST_GALERA_IMAGE":  &im.galera,
	} {
		if s := os.Getenv(env); s != "" {
			*v = s
		}
	}
	return im
}

func TestMain(m *testing.M) {
	code := m.Run()
	if os.Getenv("LEAF_TEST_CONTAINERS") == "1" {
		sweep()
	}
	os.Exit(code)
}

// sweep removes every container, network and volume carrying the label,
// and those of the compose projects (named leafctp…).
func sweep() {
	for _, kind := range []string{"container", "network", "volume"} {
		var ids []string
		for _, filter := range []string{"label=" + label, "name=" + projectPrefix} {
			ls := []string{kind, "ls", "-q", "--filter", filter}
			if kind == "container" {
				ls = append(ls, "-a") // stopped ones too
			}
			out, err := run(context.Background(), nil, "docker", ls...)
			if err == nil {
				ids = append(ids, strings.Fields(out)...)
			}
		}
		for _, id := range ids {
			args := []string{kind, "rm", "-f", "-v", id}
			switch kind {
			case "network":
				args = []string{kind, "rm", id}
			case "volume":
				args = []string{kind, "rm", "-f", id}
			}
			_, _ = run(context.Background(), nil, "docker", args...)
		}
	}
}

// require skips t unless LEAF_TEST_CONTAINERS=1; then it fails t when no
// engine answers.
func require(t *testing.T) {
	t.Helper()
	if os.Getenv("LEAF_TEST_CONTAINERS") != "1" {
		t.Skip("LEAF_TEST_CONTAINERS is not 1: make containers runs these tests against a Docker engine")
	}
	if _, err := run(context.Background(), nil, "docker", "version", "--format", "{{.Server.Version}}"); err != nil {
		t.Fatalf("LEAF_TEST_CONTAINERS=1 but no Docker engine answers: %v", err)
	}
}

// run runs a command with env added to the process's, and returns its
// standard output; the error holds its standard error.
func run(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, tail(errOut.String()+out.String(), 3000))
	}
	return out.String(), nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// docker runs the docker CLI and fails t on an error.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := run(ctx, nil, "docker", args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// logsOf is container c's log, both streams.
func logsOf(t *testing.T, c string) string {
	t.Helper()
	cmd := exec.Command("docker", "logs", c)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("docker logs %s: %v", c, err)
	}
	return string(out)
}

// name is a name for something a test makes, unique to this run.
func name(what string) string { return "leafct-" + what + "-" + randomHex() }

func randomHex() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// freePort is a port free on 127.0.0.1 now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// repoRoot is the checkout, where the Dockerfile and compose files are.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

var (
	buildOnce  sync.Once
	builtImage string
	buildErr   error
	buildTook  time.Duration
)

// leafImage builds the Dockerfile's image once per run, with the base
// images chosen and the host's network for go mod download.
func leafImage(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		im := chosen()
		version, err := os.ReadFile(filepath.Join(repoRoot(t), "VERSION"))
		if err != nil {
			buildErr = err
			return
		}
		tag := "leaf:containers-test"
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		start := time.Now()
		_, buildErr = run(ctx, nil, "docker", "build", "-q", "--force-rm", "--network=host",
			"--build-arg", "GO_IMAGE="+im.golang, "--build-arg", "RUNTIME_IMAGE="+im.runtime,
			"--build-arg", "VERSION="+strings.TrimSpace(string(version)),
			"-t", tag, repoRoot(t))
		buildTook = time.Since(start)
		builtImage = tag
	})
	if buildErr != nil {
		t.Fatalf("docker build: %v", buildErr)
	}
	return builtImage
}

// compose is the Compose command: the docker compose plugin when it
// answers, else Debian's docker-compose.
func compose(t *testing.T) []string {
	t.Helper()
	if _, err := run(context.Background(), nil, "docker", "compose", "version"); err == nil {
		return []string{"docker", "compose"}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	t.Fatal("neither docker compose nor docker-compose is installed (Debian: apt-get install docker-compose)")
	return nil
}

// project is one Compose project of a test: its files, its name and its
// variables; Cleanup takes it down with its volumes.
type project struct {
	t     *testing.T
	cmd   []string
	files []string
	name  string
	env   []string
}

func newProject(t *testing.T, env []string, files ...string) *project {
	t.Helper()
	p := &project{t: t, cmd: compose(t), name: projectPrefix + randomHex(), env: env}
	for _, f := range files {
		p.files = append(p.files, filepath.Join(repoRoot(t), f))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := p.exec(ctx, "logs", "--no-color", "--tail=40"); err == nil && t.Failed() {
			t.Logf("compose logs:\n%s", out)
		}
		if _, err := p.exec(ctx, "down", "-v", "--rmi", "local", "--remove-orphans", "-t", "30"); err != nil {
			t.Errorf("compose down: %v", err)
		}
	})
	return p
}

func (p *project) exec(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{}, p.cmd[1:]...)
	for _, f := range p.files {
		argv = append(argv, "-f", f)
	}
	argv = append(argv, "-p", p.name)
	argv = append(argv, args...)
	return run(ctx, p.env, p.cmd[0], argv...)
}

// do runs a compose command and fails the test on an error.
func (p *project) do(timeout time.Duration, args ...string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := p.exec(ctx, args...)
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

// container is the name of a service's (first) container.
func (p *project) container(service string) string {
	p.t.Helper()
	id := strings.TrimSpace(p.do(time.Minute, "ps", "-q", service))
	if id == "" {
		p.t.Fatalf("compose: no container for %s", service)
	}
	return strings.Fields(id)[0]
}

// portEnv is NAME=port.
func portEnv(name string, port int) string { return name + "=" + strconv.Itoa(port) }
