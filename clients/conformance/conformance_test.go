package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/store/storetest"
)

// Binaries built once by TestMain, in buildDir.
var (
	buildDir    string
	leafBin     string
	goDriverBin string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "leaf-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	buildDir = dir
	leafBin, goDriverBin = filepath.Join(dir, "leaf"), filepath.Join(dir, "go-driver")
	for _, b := range []struct{ out, pkg string }{{leafBin, "./cmd/leaf"}, {goDriverBin, "./clients/conformance/drivers/go"}} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", b.pkg, err, out)
			return 1
		}
	}
	return storetest.Main(m)
}

// suite is cases.json.
type suite struct {
	ErrorCodes []struct {
		Code     string `json:"code"`
		Status   int    `json:"status"`
		Kind     string `json:"kind"`
		Failover bool   `json:"failover"`
	} `json:"error_codes"`
	OtherAnswers []struct {
		About    string `json:"about"`
		Status   int    `json:"status"`
		Body     string `json:"body"`
		Kind     string `json:"kind"`
		Failover bool   `json:"failover"`
	} `json:"other_answers"`
	Cases []testCase `json:"cases"`
}

type testCase struct {
	Name       string   `json:"name"`
	About      string   `json:"about"`
	Drivers    string   `json:"drivers"` // "all": every client at once; "fork": each client whose runtime forks
	Servers    int      `json:"servers"`
	Store      string   `json:"store"` // "sqlite": a file each; "mysql": one database for all
	ServerArgs []string `json:"server_args"`
	Setup      []struct {
		Path string         `json:"path"`
		Body map[string]any `json:"body"`
	} `json:"setup"`
	Steps []step `json:"steps"`
}

type step struct {
	Do        string          `json:"do"`
	Client    string          `json:"client"`
	Endpoints []string        `json:"endpoints"`
	Config    map[string]any  `json:"config"`
	Tag       *string         `json:"tag"`
	Space     *string         `json:"space"`
	Key       *string         `json:"key"`
	Keys      []string        `json:"keys"`
	N         *int            `json:"n"`
	Repeat    int             `json:"repeat"`
	Children  int             `json:"children"`
	Threads   int             `json:"threads"`
	Pace      int             `json:"pace"`
	Server    json.RawMessage `json:"server"` // an index, or "*" for all
	Path      string          `json:"path"`
	AtLeast   *int            `json:"at_least"`
	AtMost    *int            `json:"at_most"`
	WithinMS  int             `json:"within_ms"`
	Status    int             `json:"status"`
	Code      string          `json:"code"`
	MS        int             `json:"ms"`
	RetryMS   int             `json:"retry_ms"`
	Owners    int             `json:"owners"`
	Op        string          `json:"op"`
	Expect    expect          `json:"expect"`
}

type expect struct {
	Values       *[]string `json:"values"`
	Error        string    `json:"error"`
	First        string    `json:"first"`
	Consecutive  bool      `json:"consecutive"`
	Unique       bool      `json:"unique"`
	Current      bool      `json:"current"`
	Direct       bool      `json:"direct"`
	DrawnAtLeast int       `json:"drawn_at_least"`
	Errors       *int      `json:"errors"`
	// Of worker ids, against the lease the case abandoned (step abandon):
	// none made with its worker id, or every one after its reserve.
	NotAbandoned   bool `json:"not_abandoned"`
	AfterAbandoned bool `json:"after_abandoned"`
}

func loadSuite(tb testing.TB) suite {
	tb.Helper()
	b, err := os.ReadFile("cases.json")
	if err != nil {
		tb.Fatal(err)
	}
	var s suite
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatalf("cases.json: %v", err)
	}
	return s
}

// TestErrorCodesMatchServer holds the suite's table of error codes to the
// server's one table (service): every code, with its HTTP status; a code
// the server adds fails here until the suite says what clients make of it.
func TestErrorCodesMatchServer(t *testing.T) {
	s := loadSuite(t)
	suiteCodes := map[string]int{}
	for _, c := range s.ErrorCodes {
		suiteCodes[c.Code] = c.Status
		if c.Failover != (c.Status >= 500 && c.Code != service.TagMisconfigured) {
			t.Errorf("%s: failover %v, but only a 5xx other than tag_misconfigured is failed over", c.Code, c.Failover)
		}
	}
	serverCodes := map[string]int{}
	for _, c := range service.Codes() {
		serverCodes[c] = service.HTTPStatus(c)
	}
	if !maps.Equal(suiteCodes, serverCodes) {
		t.Errorf("cases.json's error_codes differ from service's table:\n suite:  %v\n server: %v", suiteCodes, serverCodes)
	}
}

// TestConformance runs every case with the driver of every client, one
// client at a time; a case of "drivers": "all" runs once, with every
// client at once. LEAF_CONFORMANCE_CLIENTS=go,python picks clients.
func TestConformance(t *testing.T) {
	s := loadSuite(t)
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	var langs []language
	pick := os.Getenv("LEAF_CONFORMANCE_CLIENTS")
	for _, l := range languages {
		if pick != "" && !slices.Contains(strings.Split(pick, ","), l.name) {
			continue
		}
		if _, _, err := l.command(); err != nil {
			msg := fmt.Sprintf("the %s client is not checked: %v", l.name, err)
			if ci {
				t.Errorf("%s (CI is true, so this is a failure, not a skip)", msg)
			} else {
				t.Log(msg)
			}
			continue
		}
		langs = append(langs, l)
	}
	if len(langs) == 0 {
		t.Skip("no client's driver can run here")
	}
	for _, c := range s.Cases {
		if c.Drivers == "all" {
			t.Run(c.Name+"/all", func(t *testing.T) { runCase(t, s, c, langs) })
			continue
		}
		for _, l := range langs {
			if c.Drivers == "fork" && l.forks == "" {
				continue
			}
			t.Run(c.Name+"/"+l.name, func(t *testing.T) { runCase(t, s, c, []language{l}) })
		}
	}
}

// env is one running case.
type env struct {
	t       *testing.T
	s       suite
	servers []*server
	drivers []*driver
	urls    map[string]string // endpoint names of the case: server:N, unreachable, refusing

	ids   map[string]map[int64]string // per tag (or "snowflake"): every id drawn, and by whom
	seqs  map[string]int64            // per space and key: the last number issued
	dir   string
	draws map[*driver]drawn // the draw each driver runs

	abandoned abandonedLease // the lease of a holder that died (step abandon)
}

// drawn is a draw a driver runs: the tag and the file of its ids.
type drawn struct{ tag, file string }

func runCase(t *testing.T, s suite, c testCase, langs []language) {
	var storeArgs func(int) []string
	switch c.Store {
	case "sqlite":
		dir := t.TempDir()
		storeArgs = func(i int) []string {
			return []string{"--sqlite-path", filepath.Join(dir, fmt.Sprintf("leaf-%d.db", i))}
		}
	case "mysql":
		dsn := storetest.MySQL(t)
		storeArgs = func(int) []string { return []string{"--mysql-dsn", dsn} }
	default:
		t.Fatalf("unknown store %q", c.Store)
	}
	e := &env{t: t, s: s, urls: map[string]string{}, ids: map[string]map[int64]string{}, seqs: map[string]int64{}, dir: t.TempDir(), draws: map[*driver]drawn{}}
	e.servers = startServers(t, c.Servers, storeArgs, c.ServerArgs)
	for i, sv := range e.servers {
		e.urls["server:"+strconv.Itoa(i)] = sv.proxy.url()
	}
	e.urls["unreachable"] = unreachable(t)
	e.urls["refusing"] = refusing(t)
	for _, a := range c.Setup {
		if err := e.servers[0].admin(a.Path, a.Body); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	for _, l := range langs {
		e.drivers = append(e.drivers, startDriver(t, l))
	}
	for i, st := range c.Steps {
		if !e.step(st) {
			t.Fatalf("step %d (%s) failed", i+1, st.Do)
		}
	}
}

// step runs one step; false when the case cannot go on.
func (e *env) step(st step) bool {
	t := e.t
	switch st.Do {
	case "client":
		eps := make([]string, len(st.Endpoints))
		for i, name := range st.Endpoints {
			if eps[i] = e.urls[name]; eps[i] == "" {
				t.Errorf("unknown endpoint %q", name)
				return false
			}
		}
		cfg := st.Config
		if cfg == nil {
			cfg = map[string]any{}
		}
		for _, d := range e.drivers {
			a, err := d.call(map[string]any{"op": "client", "name": st.Client, "endpoints": eps, "config": cfg})
			if err != nil || a.Error != nil {
				t.Errorf("%s: client: %v %v", d.lang, err, a.Error)
				return false
			}
		}
	case "next", "next_n", "snowflake", "seq_next", "seq_current", "close", "fork", "worker":
		for _, d := range e.drivers {
			if !e.call(d, st) {
				return false
			}
		}
	case "draw_start":
		for _, d := range e.drivers {
			dr := drawn{tag: *st.Tag, file: filepath.Join(e.dir, fmt.Sprintf("%s-%d.ids", d.lang, len(e.draws)))}
			e.draws[d] = dr
			a, err := d.call(map[string]any{"op": "draw_start", "client": st.Client, "tag": dr.tag,
				"threads": st.Threads, "pace": st.Pace, "file": dr.file})
			if err != nil || a.Error != nil {
				t.Errorf("%s: draw_start: %v %v", d.lang, err, a.Error)
				return false
			}
		}
	case "draw_stop":
		for _, d := range e.drivers {
			a, err := d.call(map[string]any{"op": "draw_stop"})
			if err != nil || a.Error != nil {
				t.Errorf("%s: draw_stop: %v %v", d.lang, err, a.Error)
				return false
			}
			e.checkDraw(d, a, st.Expect)
		}
	case "sleep":
		time.Sleep(time.Duration(st.MS) * time.Millisecond)
	case "abandon":
		return e.abandon(st)
	case "kill":
		if err := e.server(st).kill(); err != nil {
			t.Error(err)
			return false
		}
	case "start":
		if err := e.server(st).start(); err != nil {
			t.Error(err)
			return false
		}
	case "inject":
		body := ""
		if st.Code != "" {
			body = fmt.Sprintf(`{"error":{"code":%q,"message":"injected by the conformance suite"}}`, st.Code)
		}
		e.server(st).proxy.setInjection(&injection{path: st.Path, status: st.Status, body: body})
	case "clear":
		e.server(st).proxy.setInjection(nil)
	case "expect_requests":
		return e.expectRequests(st)
	case "wait_routes":
		return e.waitRoutes(st)
	case "each_error":
		return e.eachError(st)
	case "expect_routes_refreshed":
		return e.expectRoutesRefreshed(st)
	default:
		t.Errorf("unknown step %q", st.Do)
		return false
	}
	return true
}

func (e *env) server(st step) *server {
	i, err := strconv.Atoi(string(st.Server))
	if err != nil || i < 0 || i >= len(e.servers) {
		e.t.Fatalf("step %s: server %s", st.Do, st.Server)
	}
	return e.servers[i]
}

// selected is the proxies a step names: one server's, or every one's.
func (e *env) selected(st step) []*proxy {
	if string(st.Server) == `"*"` {
		var out []*proxy
		for _, s := range e.servers {
			out = append(out, s.proxy)
		}
		return out
	}
	return []*proxy{e.server(st).proxy}
}

// request is the driver request of a call step, for one key.
func request(st step, key *string) map[string]any {
	r := map[string]any{"op": st.Do, "client": st.Client}
	if st.Tag != nil {
		r["tag"] = *st.Tag
	}
	if st.Space != nil {
		r["space"] = *st.Space
	}
	if key != nil {
		r["key"] = *key
	}
	if st.N != nil {
		r["n"] = *st.N
	}
	if st.Repeat > 0 {
		r["repeat"] = st.Repeat
	}
	if st.Do == "fork" {
		r["children"] = st.Children
	}
	return r
}

// call runs a call step with one driver, retrying while the answer is
// unavailable if the step says so, and checks its answer.
func (e *env) call(d *driver, st step) bool {
	keys := []*string{st.Key}
	for _, k := range st.Keys {
		keys = append(keys, &k)
	}
	if len(st.Keys) > 0 {
		keys = keys[1:]
	}
	forwardedBefore := e.forwarded()
	for _, key := range keys {
		req := request(st, key)
		deadline := time.Now().Add(time.Duration(st.RetryMS) * time.Millisecond)
		var a answer
		var err error
		for {
			a, err = d.call(req)
			if err != nil {
				e.t.Error(err)
				return false
			}
			if a.Error == nil || a.Error.Kind != "unavailable" || !time.Now().Before(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !e.check(d, st, key, a) {
			return false
		}
	}
	if st.Expect.Direct {
		if n := e.forwarded() - forwardedBefore; n > 0 {
			e.t.Errorf("%s: %d sequence calls were forwarded by a server: the client did not call the owners", d.lang, n)
		}
	}
	return true
}

// forwarded counts the sequence requests a server forwarded to another.
func (e *env) forwarded() int {
	n := 0
	for _, s := range e.servers {
		for _, r := range s.proxy.matching("/api/sequence/") {
			if r.forwarded {
				n++
			}
		}
	}
	return n
}

// check checks an answer against the step's expectations and the case's
// invariants; false when the case cannot go on.
func (e *env) check(d *driver, st step, key *string, a answer) bool {
	t := e.t
	x := st.Expect
	what := fmt.Sprintf("%s: %s", d.lang, st.Do)
	if st.Tag != nil {
		what += " " + strconv.Quote(*st.Tag)
	}
	if key != nil && st.Space != nil {
		what += fmt.Sprintf(" %q/%q", *st.Space, *key)
	}
	if x.Error != "" {
		if a.Error == nil || a.Error.Kind != x.Error {
			t.Errorf("%s: got %v and %v, want the error %s", what, a.Values, a.Error, x.Error)
		}
		return true
	}
	if a.Error != nil {
		t.Errorf("%s: %v (after %d values)", what, a.Error, len(a.Values))
		return false
	}
	vals := make([]int64, len(a.Values))
	for i, v := range a.Values {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n == 0 && st.Do != "seq_current" {
			t.Errorf("%s: %q is not a positive 64-bit integer", what, v)
			return false
		}
		vals[i] = n
	}
	want := max(st.Repeat, 1)
	switch st.Do {
	case "next_n":
		want = *st.N
	case "close":
		want = 0
	case "fork":
		want *= st.Children + 1
	}
	if len(vals) != want {
		t.Errorf("%s: %d values, want %d", what, len(vals), want)
		return false
	}
	if x.Values != nil && !slices.Equal(a.Values, *x.Values) {
		t.Errorf("%s: got %v, want %v", what, a.Values, *x.Values)
	}
	if x.First != "" && (len(a.Values) == 0 || a.Values[0] != x.First) {
		t.Errorf("%s: first value %v, want %s", what, a.Values[:min(1, len(a.Values))], x.First)
	}
	for i := 1; i < len(vals); i++ {
		if x.Consecutive && vals[i] != vals[i-1]+1 {
			t.Errorf("%s: value %d is %d after %d, want consecutive values", what, i, vals[i], vals[i-1])
			break
		}
	}
	if !e.checkAbandoned(what, st, vals) {
		return false
	}
	who := fmt.Sprintf("%s client %s", d.lang, st.Client)
	switch st.Do {
	case "next", "next_n", "snowflake", "fork", "worker":
		set := "snowflake"
		if st.Tag != nil {
			set = "tag " + *st.Tag
		}
		e.record(set, vals, who)
	case "seq_next":
		n := 1
		if st.N != nil {
			n = *st.N
		}
		k := *st.Space + "/" + *key
		for _, v := range vals {
			if last := e.seqs[k]; v <= last {
				t.Errorf("%s: %d, not above %d, the last number the key was given", what, v, last)
			}
			e.seqs[k] = v + int64(n) - 1
		}
	case "seq_current":
		k := *st.Space + "/" + *key
		if x.Current && len(vals) == 1 && vals[0] != e.seqs[k] {
			t.Errorf("%s: current %d, want %d, the last number issued", what, vals[0], e.seqs[k])
		}
	}
	return true
}

// record adds ids to a set, failing on any drawn before.
func (e *env) record(set string, ids []int64, who string) {
	m := e.ids[set]
	if m == nil {
		m = map[int64]string{}
		e.ids[set] = m
	}
	dups := 0
	for _, id := range ids {
		if by, ok := m[id]; ok {
			if dups++; dups <= 5 {
				e.t.Errorf("%s: id %d drawn twice: by %s and by %s", set, id, by, who)
			}
			continue
		}
		m[id] = who
	}
	if dups > 5 {
		e.t.Errorf("%s: %d ids drawn twice in all", set, dups)
	}
}

func (e *env) checkDraw(d *driver, a answer, x expect) {
	dr := e.draws[d]
	delete(e.draws, d)
	b, err := os.ReadFile(dr.file)
	if err != nil {
		e.t.Errorf("%s: the ids of the draw: %v", d.lang, err)
		return
	}
	var ids []int64
	for _, line := range strings.Fields(string(b)) {
		id, err := strconv.ParseInt(line, 10, 64)
		if err != nil || id < 1 {
			e.t.Errorf("%s: drew %q, not a positive 64-bit integer", d.lang, line)
			return
		}
		ids = append(ids, id)
	}
	if len(ids) != a.Drawn {
		e.t.Errorf("%s: the draw says %d ids, its file has %d", d.lang, a.Drawn, len(ids))
	}
	e.t.Logf("%s: drew %d ids, errors %v", d.lang, len(ids), a.Errors)
	e.record("tag "+dr.tag, ids, d.lang+" draw")
	if len(ids) < x.DrawnAtLeast {
		e.t.Errorf("%s: drew %d ids, want at least %d", d.lang, len(ids), x.DrawnAtLeast)
	}
	if x.Errors != nil {
		n := 0
		for _, c := range a.Errors {
			n += c
		}
		if n > *x.Errors {
			e.t.Errorf("%s: %d calls failed while drawing (%v), want at most %d", d.lang, n, a.Errors, *x.Errors)
		}
	}
}
