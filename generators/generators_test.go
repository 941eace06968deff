package generators

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/leafid/leaf/internal/proc"
	"github.com/leafid/leaf/internal/testkit"
)

const (
	adminToken  = "generators-admin-token"
	statusToken = "generators-status-token"
	opaqueKey   = "a key of the generated clients' test"
)

// TestGeneratedClients generates the three clients, runs each one's
// program against two leaf instances, and checks that together the
// programs' calls cover the document.
func TestGeneratedClients(t *testing.T) {
	if os.Getenv("LEAF_TEST_GENERATORS") != "1" {
		t.Skip("generates clients with tools from the Go module proxy and npm: LEAF_TEST_GENERATORS=1 (make generated-clients)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	doc := operations(t, filepath.Join(root, "httpapi/openapi.json"))
	a, b := startLeaf(t, root)
	env := append(os.Environ(), "LEAF_URL="+a, "LEAF_OTHER_URL="+b,
		"LEAF_ADMIN_TOKEN="+adminToken, "LEAF_STATUS_TOKEN="+statusToken)
	spec := filepath.Join(root, "httpapi/openapi.json")
	goDir, tsDir := filepath.Join(root, "generators/go"), filepath.Join(root, "generators/typescript")
	// Each generator with its default options; a generator that refuses
	// the document, or leaves an operation out (ogen fails rather than
	// skip one), fails here. The Go clients build, with everything ogen
	// writes (its server too), and the programs' module is tidy and vetted.
	generate := [][]string{
		{"go", "tool", "ogen", "-target", "ogen/leafapi", "-package", "leafapi", "-clean", spec},
		{"go", "tool", "oapi-codegen", "-generate", "types,client", "-package", "leafapi", "-o", "oapicodegen/leafapi/client.go", spec},
		{"go", "build", "./..."},
		{"go", "mod", "tidy", "-diff"},
		{"go", "vet", "./check", "./ogen", "./oapicodegen"},
	}
	ts := [][]string{
		{"npm", "ci", "--no-audit", "--no-fund"},
		{"npm", "run", "generate"},
		{"npm", "run", "build"}, // tsc, strict
	}
	for _, g := range []struct {
		name     string
		dir      string
		generate [][]string // in dir, each must succeed
		check    []string
	}{
		{"ogen", goDir, generate, []string{"go", "run", "./ogen"}},
		{"oapi-codegen", goDir, nil, []string{"go", "run", "./oapicodegen"}},
		{"openapi-typescript", tsDir, ts, []string{"node", "dist/main.js"}},
	} {
		t.Run(g.name, func(t *testing.T) {
			for _, args := range g.generate {
				if out, err := run(g.dir, os.Environ(), args...); err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			out, err := run(g.dir, env, g.check...)
			calls := parseCalls(t, out)
			if err != nil {
				t.Errorf("%s: %v\n%s", strings.Join(g.check, " "), err, failures(out))
			}
			covered(t, doc, calls)
		})
	}
	t.Run("docs", func(t *testing.T) { runDocExamples(t, root, a) })
}

// run runs args in dir and returns what they print, both streams.
func run(dir string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// operations reads the operations of the document's paths: for each
// operationId, whether it documents a success (a form registered only to
// refuse does not).
func operations(t *testing.T, file string) map[string]bool {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string                     `json:"operationId"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	for _, item := range doc.Paths {
		for _, op := range item {
			ops[op.OperationID] = slices.ContainsFunc(slices.Collect(maps.Keys(op.Responses)), func(s string) bool { return strings.HasPrefix(s, "2") })
		}
	}
	return ops
}

// call is one line of a program: an operation, its status, whether the
// decoded answer matched the raw one.
type call struct {
	op     string
	status int
	ok     bool
}

var callLine = regexp.MustCompile(`^(ok|FAIL) ([A-Za-z]+)(?: (\d{3}))?`)

func parseCalls(t *testing.T, out string) []call {
	var calls []call
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := callLine.FindStringSubmatch(sc.Text()); m != nil {
			status, _ := strconv.Atoi(m[3])
			calls = append(calls, call{op: m[2], status: status, ok: m[1] == "ok"})
		}
	}
	if len(calls) == 0 {
		t.Errorf("the program reported no call:\n%s", out)
	}
	return calls
}

func failures(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "ok ") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// covered fails t for an operation of the document no call answered
// with a success (or, for a form that only refuses, answered at all), for
// an error status no call provoked, and for a call of no operation.
func covered(t *testing.T, doc map[string]bool, calls []call) {
	t.Helper()
	succeeded, reached, statuses := map[string]bool{}, map[string]bool{}, map[int]bool{}
	for _, c := range calls {
		if _, ok := doc[c.op]; !ok {
			t.Errorf("the program called %s, which is no operation of the document", c.op)
		}
		if !c.ok {
			continue
		}
		reached[c.op] = true
		if c.status < 300 {
			succeeded[c.op] = true
		} else {
			statuses[c.status] = true
		}
	}
	for _, op := range slices.Sorted(maps.Keys(doc)) {
		if doc[op] && !succeeded[op] || !reached[op] {
			t.Errorf("no call of %s was answered and decoded as it should", op)
		}
	}
	for _, s := range []int{400, 401, 404, 409, 410, 413, 500, 503} {
		if !statuses[s] {
			t.Errorf("no call provoked and decoded a %d", s)
		}
	}
	t.Logf("%d calls, of %d operations of %d; the errors %v", len(calls), len(reached), len(doc), slices.Sorted(maps.Keys(statuses)))
}

// startLeaf builds leaf, makes the tags and the space the programs use,
// and starts two instances: a, with the admin API and a status token,
// owning the ordered tag and the space's sections for an hour; and b, on
// a store of its own with the tag cold, which the test then holds locked,
// with no admin API.
func startLeaf(t *testing.T, root string) (a, b string) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "leaf")
	if out, err := run(root, os.Environ(), "go", "build", "-o", bin, "./cmd/leaf"); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db := filepath.Join(dir, "leaf.db")
	env := append(os.Environ(), "LEAF_SQLITE_PATH="+db, "LEAF_OPAQUE_KEY="+opaqueKey)
	for _, args := range [][]string{
		{"tag", "add", "orders"},
		{"tag", "add", "fmt", "--format", "ORD-{date:20060102}-{seq:6}", "--reset", "day"},
		{"tag", "add", "opq", "--opaque", "63"},
		{"tag", "add", "ticks", "--ordered"},
		{"tag", "add", "exhausted"},
		{"tag", "add", "bad"},
		{"sequence", "add", "inbox", "--sections", "4"},
	} {
		if out, err := run(dir, env, append([]string{bin}, args...)...); err != nil {
			t.Fatalf("leaf %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// What no API makes: a row at the int64 maximum (410) and a row with
	// a step below 1 (500), as an operator's mistake would leave them.
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(`UPDATE leaf_alloc SET max_id = 9223372036854775807 WHERE biz_tag = 'exhausted';
		UPDATE leaf_alloc SET step = 0 WHERE biz_tag = 'bad'`)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	a = serve(t, dir, bin, env, "--admin-token", adminToken, "--status-token", statusToken)
	testkit.WaitFor(t, time.Minute, "the ordered tag's owner", func() bool {
		code, _ := testkit.Get(a+"/api/segment/batch/ticks?count=1", "")
		return code == 200
	})
	other := t.TempDir()
	otherDB := filepath.Join(other, "leaf.db")
	otherEnv := append(os.Environ(), "LEAF_SQLITE_PATH="+otherDB)
	if out, err := run(other, otherEnv, bin, "tag", "add", "cold"); err != nil {
		t.Fatalf("leaf tag add cold: %v\n%s", err, out)
	}
	b = serve(t, other, bin, otherEnv, "--store-timeout", "300ms", "--snowflake-worker-id", "2")
	lockStore(t, otherDB)
	return a, b
}

// lockStore holds a write lock on the SQLite file until the test ends:
// an instance on it takes no range (503 unavailable, once its buffers are
// empty).
func lockStore(t *testing.T, file string) {
	db, err := sql.Open("sqlite", file+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err == nil {
		_, err = conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		db.Close()
	})
}

// serve starts an instance with the sequence lease of an hour, so that
// owners do not change during the test, and waits until it is ready.
func serve(t *testing.T, dir, bin string, env []string, flags ...string) string {
	addr := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	var log testkit.SyncBuffer
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--sequence-lease", "1h"}, flags...)...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &log, &log
	p, err := proc.Start(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Signal(syscall.SIGTERM, 10*time.Second, 5*time.Second)
		if t.Failed() {
			t.Logf("leaf on %s:\n%s", addr, log.String())
		}
	})
	url := "http://" + addr
	testkit.WaitFor(t, time.Minute, "leaf on "+addr, func() bool {
		code, _ := testkit.Get(url+"/readyz", "")
		return code == 200 || p.Exited()
	})
	if p.Exited() {
		t.Fatalf("leaf on %s exited:\n%s", addr, log.String())
	}
	return url
}

// docMarker starts the line above each example of docs/openapi.md that
// this test runs.
const docMarker = "<!-- docs-test: skip: make generated-clients runs it as written"

// runDocExamples runs each such example with bash in a new directory,
// with localhost:8080 made the instance's address, and checks that it
// prints an id.
func runDocExamples(t *testing.T, root, url string) {
	b, err := os.ReadFile(filepath.Join(root, "docs/openapi.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), docMarker)[1:]
	if len(blocks) != 3 {
		t.Fatalf("docs/openapi.md has %d examples to run, want 3 (ogen, oapi-codegen, openapi-typescript)", len(blocks))
	}
	host := strings.TrimPrefix(url, "http://")
	for i, block := range blocks {
		_, code, _ := strings.Cut(block, "```sh\n")
		code, _, _ = strings.Cut(code, "\n```")
		code = strings.ReplaceAll(code, "localhost:8080", host)
		t.Run(strconv.Itoa(i+1), func(t *testing.T) {
			out, err := run(t.TempDir(), os.Environ(), "bash", "-euo", "pipefail", "-c", code)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if last := lines[len(lines)-1]; err != nil || !regexp.MustCompile(`^[0-9]+$`).MatchString(last) {
				t.Errorf("docs/openapi.md, example %d: %v; it printed:\n%s", i+1, err, out)
			}
		})
	}
}
