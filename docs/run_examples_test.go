package docs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/proc"
	"github.com/leafid/leaf/internal/testkit"
)

// The server an example meets, unless its document starts one itself: the
// README's, with the admin token and opaque key the documents use.
const (
	adminToken = "dev-admin-token-local"
	opaqueKey  = "a secret of at least 16 bytes"
)

// TestExamples runs every example of the README, docs/ and the clients'
// READMEs as written, in document order, one document at a time against a
// fresh leaf of its own (docs/testing.md, "Examples"): shell blocks with
// bash, each command's output held to the "# → …" it is shown to print;
// Go, Python, TypeScript and Java blocks run against that server. A block
// that cannot run here says why in a <!-- docs-test: skip: … --> line.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds leaf and runs every example")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, b := range [][2]string{{"leaf", "./cmd/leaf"}, {"grpcurl", "github.com/fullstorydev/grpcurl/cmd/grpcurl"}} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, b[0]), b[1])
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	tools := &toolchain{root: root, bin: bin, dir: t.TempDir()}
	ran := 0
	for _, doc := range exampleDocs(t) {
		exs := examples(t, doc)
		ran += len(exs)
		if len(exs) == 0 {
			continue
		}
		t.Run(doc, func(t *testing.T) {
			t.Parallel()
			r := &docRun{t: t, tools: tools, port: testkit.FreePort(t), dir: t.TempDir()}
			for _, ex := range exs {
				r.run(ex)
			}
		})
	}
	if ran < 30 {
		t.Errorf("%d examples found, want at least 30: the blocks are not found", ran)
	}
}

// toolchain is what every document's run shares: the repository, the
// binaries built once, and the Java client compiled once.
type toolchain struct {
	root, bin, dir string
	javaOnce       sync.Once
	javaErr        error
}

// docRun runs one document's examples against its own server.
type docRun struct {
	t       *testing.T
	tools   *toolchain
	port    int
	dir     string
	started bool
}

func (r *docRun) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// env is the environment of every example: the built leaf and grpcurl
// first on PATH, the server's address and file, the Python client
// importable; no LEAF_ variable of the test's own.
func (r *docRun) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LEAF_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "PYTHONPATH=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+r.tools.bin+":"+os.Getenv("PATH"),
		"LEAF_ADDR="+r.addr(), "LEAF_SQLITE_PATH="+filepath.Join(r.dir, "leaf.db"),
		"PYTHONPATH="+filepath.Join(r.tools.root, "clients/python/src"))
}

// written is the example's code with the addresses the documents use
// (localhost:8080, and leaf-1, leaf-2 and host for a client's endpoints)
// made the address of this document's server.
func (r *docRun) written(code string) string {
	for _, a := range []string{"localhost:8080", "leaf-1:8080", "leaf-2:8080", "host:8080"} {
		code = strings.ReplaceAll(code, a, r.addr())
	}
	return code
}

func (r *docRun) run(ex example) {
	t := r.t
	switch m := ex.marker; {
	case strings.HasPrefix(m, "skip:"):
		if strings.TrimSpace(strings.TrimPrefix(m, "skip:")) == "" {
			t.Errorf("%v: a skip must say why", ex)
		}
		return
	case m == "server":
		r.serve(exec.Command("bash", "-c", r.written(ex.code)), ex.String())
		return
	case strings.HasPrefix(m, "given "):
		r.serve(exec.Command(filepath.Join(r.tools.bin, "leaf"), "serve"), "leaf serve")
		r.given(ex, strings.TrimPrefix(m, "given "))
	case m != "":
		t.Errorf("%v: unknown marker %q: want skip: REASON, server, or given tag T, space S", ex, m)
		return
	default:
		r.serve(exec.Command(filepath.Join(r.tools.bin, "leaf"), "serve"), "leaf serve")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	switch ex.lang {
	case "sh":
		r.shell(ctx, ex)
	default:
		r.program(ctx, ex)
	}
}

// serve starts the document's server with cmd, unless it runs already,
// and waits until it answers.
func (r *docRun) serve(cmd *exec.Cmd, what string) {
	t := r.t
	if r.started {
		return
	}
	r.started = true
	var log testkit.SyncBuffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = r.tools.root, &log, &log
	cmd.Env = append(r.env(), "LEAF_ADMIN_TOKEN="+adminToken, "LEAF_OPAQUE_KEY="+opaqueKey)
	p, err := proc.Start(cmd, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Cleanup(func() {
		_ = p.Signal(syscall.SIGTERM, 10*time.Second, 5*time.Second)
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	})
	deadline := time.Now().Add(3 * time.Minute) // go run compiles first
	for {
		if code, _ := testkit.Get("http://"+r.addr()+"/healthz", ""); code == http.StatusOK {
			return
		}
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("%s: the server did not answer on %s:\n%s", what, r.addr(), log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// given creates what a block expects to exist: "tag T, space S, …".
func (r *docRun) given(ex example, what string) {
	for _, item := range strings.Split(what, ",") {
		kind, name, _ := strings.Cut(strings.TrimSpace(item), " ")
		path, body := map[string][2]string{
			"tag":   {"/api/admin/tags", `{"tag":%q}`},
			"space": {"/api/admin/sequences", `{"space":%q}`},
		}[kind], ""
		if path[0] == "" {
			r.t.Fatalf("%v: given %q: want tag NAME or space NAME", ex, item)
		}
		body = fmt.Sprintf(path[1], name)
		if code, out := testkit.Post("http://"+r.addr()+path[0], adminToken, body); code != http.StatusCreated && code != http.StatusOK && code != http.StatusConflict { // made by an earlier block
			r.t.Fatalf("%v: given %s: %d %s", ex, item, code, out)
		}
	}
}

// sep ends each command's output in the shell's stdout.
const sep = "\n\x1edocs-test\x1e\n"

// shell runs a shell example with bash, stopping at the first command that
// fails, and holds each command's output to what the block shows.
func (r *docRun) shell(ctx context.Context, ex example) {
	t := r.t
	cmds := commands(r.written(ex.code))
	var script strings.Builder
	script.WriteString("set -eo pipefail\n")
	for _, c := range cmds {
		fmt.Fprintf(&script, "%s\nprintf '%%b' %q\n", c.text, strings.ReplaceAll(sep, "\x1e", `\036`))
	}
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	var stdout, stderr bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = r.tools.root, r.env(), &stdout, &stderr
	err := cmd.Run()
	outs := strings.Split(stdout.String(), sep)
	for i, c := range cmds {
		if i >= len(outs)-1 {
			t.Errorf("%v: %s\nfailed: %v\n%s%s", ex, c.text, err, outs[len(outs)-1], stderr.String())
			return
		}
		if c.want != "" && !shows(c.want, outs[i]) {
			t.Errorf("%v: %s\nprinted %s\nthe document shows %s", ex, c.text, strings.TrimSpace(outs[i]), c.want)
		}
	}
	if err != nil {
		t.Errorf("%v: %v\n%s", ex, err, stderr.String())
	}
}

// program writes a Go, Python, TypeScript or Java example to a file and
// runs it against the server.
func (r *docRun) program(ctx context.Context, ex example) {
	t := r.t
	dir := t.TempDir()
	code := r.written(ex.code)
	var cmd *exec.Cmd
	switch ex.lang {
	case "go":
		if !strings.HasPrefix(code, "package ") {
			t.Errorf("%v: a Go example is a whole program, from its package clause", ex)
			return
		}
		// The program is laid over the module as docs/example/main.go, so
		// that it imports this tree's packages; nothing is written there.
		main := filepath.Join(dir, "main.go")
		overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(r.tools.root, "docs/example/main.go"): main}})
		r.write(filepath.Join(dir, "overlay.json"), string(overlay))
		r.write(main, code)
		cmd = exec.CommandContext(ctx, "go", "run", "-overlay", filepath.Join(dir, "overlay.json"), "./docs/example")
	case "python":
		r.write(filepath.Join(dir, "example.py"), code)
		cmd = exec.CommandContext(ctx, r.need("python3"), filepath.Join(dir, "example.py"))
	case "ts", "js":
		// Written in the part of TypeScript that is JavaScript, run as an
		// ES module that imports the client as a package.
		if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(r.tools.root, "clients/typescript"), filepath.Join(dir, "node_modules/leaf-client")); err != nil {
			t.Fatal(err)
		}
		r.write(filepath.Join(dir, "example.mjs"), code)
		cmd = exec.CommandContext(ctx, r.need("node"), filepath.Join(dir, "example.mjs"))
	case "java":
		classes, err := r.tools.javaClasses(r.need("javac"))
		if err != nil {
			t.Fatal(err)
		}
		cmd = exec.CommandContext(ctx, r.need("java"), "-cp", classes, r.javaMain(dir, code))
	}
	if cmd == nil {
		return
	}
	if cmd.Dir == "" {
		cmd.Dir = r.tools.root
	}
	cmd.Env = r.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%v: %v\n%s", ex, err, out)
	}
}

func (r *docRun) write(path, content string) {
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// need finds a toolchain's command; missing, the document's test skips,
// and under CI=true fails.
func (r *docRun) need(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			r.t.Fatalf("%s not found: the examples that need it cannot run (CI is true, so this is a failure, not a skip)", name)
		}
		r.t.Skipf("%s not found: the examples that need it do not run", name)
	}
	return p
}

// javaMain makes a Java example, statements with their imports above
// them, the body of a main method, in a file the java launcher runs.
func (r *docRun) javaMain(dir, code string) string {
	var imports, body []string
	for _, l := range strings.Split(code, "\n") {
		if strings.HasPrefix(l, "import ") {
			imports = append(imports, l)
		} else {
			body = append(body, "    "+l)
		}
	}
	src := strings.Join(imports, "\n") + "\n\npublic class Example {\n  public static void main(String[] args) throws Exception {\n" +
		strings.Join(body, "\n") + "\n  }\n}\n"
	path := filepath.Join(dir, "Example.java")
	r.write(path, src)
	return path
}

// javaClasses compiles the Java client once, and returns the directory of
// its classes.
func (tc *toolchain) javaClasses(javac string) (string, error) {
	out := filepath.Join(tc.dir, "java")
	tc.javaOnce.Do(func() {
		var srcs []string
		tc.javaErr = filepath.Walk(filepath.Join(tc.root, "clients/java/src/main/java"), func(p string, fi os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, ".java") {
				srcs = append(srcs, p)
			}
			return err
		})
		if tc.javaErr == nil {
			b, err := exec.Command(javac, append([]string{"--release", "17", "-d", out}, srcs...)...).CombinedOutput()
			if err != nil {
				tc.javaErr = fmt.Errorf("javac: %v\n%s", err, b)
			}
		}
	})
	return out, tc.javaErr
}
