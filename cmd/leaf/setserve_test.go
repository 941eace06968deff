package main

// `leaf serve --store …`: instances serving one number space from several
// independent stores, over HTTP.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

// seen collects the ids instances handed out and counts those handed out
// twice, and the requests that failed.
type seen struct {
	mu     sync.Mutex
	ids    map[int64]string // id -> the instance that gave it
	dups   []string
	failed []string
}

func (s *seen) add(from string, ids []int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed = append(s.failed, err.Error())
		return
	}
	if s.ids == nil {
		s.ids = map[int64]string{}
	}
	for _, id := range ids {
		if other, ok := s.ids[id]; ok {
			s.dups = append(s.dups, fmt.Sprintf("%d from %s and %s", id, other, from))
		}
		s.ids[id] = from
	}
}

func (s *seen) check(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failed) > 0 {
		t.Errorf("%d requests failed, the first: %s", len(s.failed), s.failed[0])
	}
	if len(s.dups) > 0 {
		t.Fatalf("%d ids handed out twice of %d, the first: %s", len(s.dups), len(s.ids), s.dups[0])
	}
}

func (s *seen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

// fetchIDs asks base for n ids of tag in one batch; it may run in any
// goroutine.
func fetchIDs(base, tag string, n int) ([]int64, error) {
	resp, err := clusterClient.Get(base + "/api/segment/batch/" + tag + "?count=" + strconv.Itoa(n))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: batch of %s = %d %s", base, tag, resp.StatusCode, body)
	}
	var v struct{ IDs []string }
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("%s: batch body %q: %w", base, body, err)
	}
	ids := make([]int64, len(v.IDs))
	for i, s := range v.IDs {
		if ids[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, err
		}
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			return nil, fmt.Errorf("%s: batch of %s not increasing: %d after %d", base, tag, ids[i], ids[i-1])
		}
	}
	return ids, nil
}

// TestServeThreeStores: two instances on three stores (two SQLite files and
// a MariaDB database), each preferring another store, hand out no id twice;
// /readyz checks each store, /status.json shows the set, snowflake worker
// ids are leased from the first store.
func TestServeThreeStores(t *testing.T) {
	inEmptyDir(t)
	defer clusterClient.CloseIdleConnections()
	s := testStores(t, []string{store.SQLite, store.SQLite, store.MySQL}, 3)
	a, b, c := s[0], s[1], s[2]
	leafOK(t, storesEnv(a, b, c), "store", "init")
	leafOK(t, storesEnv(a, b, c), "tag", "add", "orders", "--step", "100")

	e := storesEnv(a, b, c)
	e["LEAF_ADMIN_TOKEN"] = "t0ken-of-the-test-00"
	first := startApp(t, e)
	second := startApp(t, storesEnv(c, a, b), "--snowflake=false")
	var all seen
	var wg sync.WaitGroup
	for _, inst := range []*testApp{first, second} {
		for range 3 {
			wg.Go(func() {
				for range 20 {
					ids, err := fetchIDs(inst.base, "orders", 40)
					all.add(inst.base, ids, err)
				}
			})
		}
	}
	wg.Wait()
	all.check(t)
	if n := all.count(); n != 2*3*20*40 {
		t.Fatalf("%d ids, want %d", n, 2*3*20*40)
	}
	// Each instance took its ranges from the store it prefers, each in its
	// own class of the set.
	ctx := context.Background()
	set, err := storeset.Decode(mustRecord(t, a).Set)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []testStore{a, c} {
		row, err := st.open(t).Tag(ctx, "orders")
		if err != nil {
			t.Fatal(err)
		}
		class, _ := set.Class(st.name)
		if row.MaxID <= 1 || !class.Contains(row.MaxID-1) {
			t.Errorf("store %s's row is at %d, want it moved in its class %+v", st.name, row.MaxID, class)
		}
	}

	code, body := testkit.MustGet(t, first.base+"/readyz")
	var ready readyBody
	if err := json.Unmarshal([]byte(body), &ready); err != nil || code != http.StatusOK || ready.Status != "ready" {
		t.Fatalf("readyz = %d %s (%v)", code, body, err)
	}
	for _, name := range []string{"store:a", "store:b", "store:c"} {
		if r := ready.check(name); r.Status != "ok" {
			t.Fatalf("readyz check %s = %+v in %s", name, r, body)
		}
	}
	if r := ready.check("store"); r.Name != "" {
		t.Fatalf("readyz has a check of one store: %s", body)
	}
	var status struct {
		Instance struct {
			Store struct {
				Kind       string `json:"kind"`
				Up         bool   `json:"up"`
				SetVersion int64  `json:"set_version"`
			} `json:"store"`
		} `json:"instance"`
	}
	if err := second.fetchJSON("/status.json", &status); err != nil {
		t.Fatal(err)
	}
	if st := status.Instance.Store; st.Kind != "3 stores: c (mysql), a (sqlite), b (sqlite)" || !st.Up || st.SetVersion != 1 {
		t.Fatalf("status.json store = %+v", st)
	}

	// A tag created over the admin API is created in every store, and
	// served at once.
	req, _ := http.NewRequest(http.MethodPost, first.base+"/api/admin/tags", strings.NewReader(`{"tag":"payments","step":10,"max_id":500}`))
	req.Header.Set("Authorization", "Bearer t0ken-of-the-test-00")
	req.Header.Set("Content-Type", "application/json")
	resp, err := clusterClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create tag = %d, want 201", resp.StatusCode)
	}
	if ids, err := fetchIDs(first.base, "payments", 5); err != nil || ids[0] < 500 {
		t.Fatalf("ids of the new tag: %v, %v", ids, err)
	}
	for _, st := range s {
		if row, err := st.open(t).Tag(ctx, "payments"); err != nil || row.Step != 10 {
			t.Fatalf("store %s: payments = %+v, %v", st.name, row, err)
		}
	}

	// Snowflake: the worker id is leased from a, the first store.
	code, body = testkit.MustGet(t, first.base+"/api/snowflake/get")
	if id, err := strconv.ParseInt(body, 10, 64); code != 200 || err != nil || id <= 0 {
		t.Fatalf("snowflake id = %d %q", code, body)
	}
	if leases := storetest.Leases(t, a.open(t)); len(leases) != 1 || leases[0].WorkerID != first.Generator().WorkerID() {
		t.Fatalf("leases in store a: %+v, want the worker id %d", leases, first.Generator().WorkerID())
	}
	for _, inst := range []*testApp{first, second} {
		if err := inst.stop(); err != nil {
			t.Fatal(err)
		}
		if logs := inst.logs.String(); !strings.Contains(logs, `msg="set of stores open" version=1`) || strings.Count(logs, `msg="store open"`) != 3 {
			t.Fatalf("%s logged\n%s", inst.base, logs)
		}
	}
}

// fetchJSON GETs path and decodes its JSON.
func (a *testApp) fetchJSON(path string, v any) error {
	return (&clusterNode{a}).fetch(path, v)
}

func mustRecord(t *testing.T, s testStore) storeset.Record {
	t.Helper()
	r, err := s.open(t).Record(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestServeRefusesAnotherSet: serve does not start with stores that are
// not the set they record, and says what differs; nor before the set is
// made.
func TestServeRefusesAnotherSet(t *testing.T) {
	inEmptyDir(t)
	s := testStores(t, []string{store.MySQL, store.SQLite}, 3)
	start := func(e env) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		logs := &testkit.SyncBuffer{}
		err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, e.get, io.Discard, logs)
		return logs.String(), err
	}
	check := func(t *testing.T, err error, want string) {
		t.Helper()
		var msg strings.Builder
		if !errors.Is(err, storeset.ErrMismatch) || !strings.Contains(err.Error(), want) || exitCode(err, &msg) != 1 {
			t.Fatalf("serve = %v, want a failed start saying %q", err, want)
		}
		if !strings.HasPrefix(msg.String(), "leaf: ") || !strings.Contains(msg.String(), want) {
			t.Fatalf("serve said %q", msg.String())
		}
	}
	_, err := start(storesEnv(s...))
	check(t, err, "belong to no set yet: create it with `leaf store init`")

	leafOK(t, storesEnv(s...), "store", "init")
	_, err = start(storesEnv(s[0], s[1]))
	check(t, err, `"c" is in the set but not configured`)
	_, err = start(storesEnv(s[0], s[1], s[2], testStores(t, []string{store.SQLite}, 4)[3]))
	check(t, err, `"d" is configured but not in the set`)
	// A store that does not answer at the start does not fail it while
	// the others answer (TestServeStoreDownAtStart); its password is
	// shown nowhere, nor its address in /readyz.
	down := s[0]
	cfg, err := store.ParseMySQLDSN(down.dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.Passwd = "127.0.0.1:1", "s3cret"
	down.dsn = cfg.FormatDSN()
	inst := startApp(t, storesEnv(down, s[1], s[2]), "--snowflake=false")
	_, body := testkit.MustGet(t, inst.base+"/readyz")
	if !strings.Contains(body, `"name":"store:a","status":"degraded"`) || strings.Contains(body, "127.0.0.1:1") {
		t.Fatalf("readyz with store a down = %s", body)
	}
	if err := inst.stop(); err != nil {
		t.Fatal(err)
	}
	if logs := inst.logs.String(); !strings.Contains(logs, `store "a"`) && !strings.Contains(logs, "store=a") || strings.Contains(logs+body, "s3cret") {
		t.Fatalf("the password is shown, or the store not named:\n%s", logs)
	}
	// The same stores in another order are the same set.
	if err := startApp(t, storesEnv(s[2], s[0], s[1]), "--snowflake=false").stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeStoreAddedWhileServing: a store added to the set while two
// instances hand out ids: ids keep coming, none twice, and an instance
// started with the new set serves from the new store.
func TestServeStoreAddedWhileServing(t *testing.T) {
	inEmptyDir(t)
	defer clusterClient.CloseIdleConnections()
	s := testStores(t, []string{store.MySQL}, 3)
	a, b, c := s[0], s[1], s[2]
	leafOK(t, storesEnv(a, b), "store", "init")
	leafOK(t, storesEnv(a, b), "tag", "add", "orders", "--step", "50")

	first := startApp(t, storesEnv(a, b), "--snowflake=false")
	second := startApp(t, storesEnv(b, a), "--snowflake=false")
	var all seen
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, inst := range []*testApp{first, second} {
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					ids, err := fetchIDs(inst.base, "orders", 20)
					all.add(inst.base, ids, err)
				}
			})
		}
	}
	testkit.WaitFor(t, 0, "ids before the change", func() bool { return all.count() >= 2000 })
	out := leafOK(t, storesEnv(a, b), "store", "add", c.flag())
	if !strings.Contains(out, "set version 2 ") {
		t.Fatalf("store add said\n%s", out)
	}
	// Each running instance takes ranges under the new set once its
	// buffers call for a load.
	setVersion := func(inst *testApp) int64 {
		var status struct {
			Instance struct {
				Store struct {
					SetVersion int64 `json:"set_version"`
				} `json:"store"`
			} `json:"instance"`
		}
		if err := inst.fetchJSON("/status.json", &status); err != nil {
			return 0
		}
		return status.Instance.Store.SetVersion
	}
	testkit.WaitFor(t, 0, "loads under the new set", func() bool { return setVersion(first) == 2 && setVersion(second) == 2 })
	before := all.count()
	testkit.WaitFor(t, 0, "ids after the change", func() bool { return all.count() >= before+2000 })

	third := startApp(t, storesEnv(c, a, b), "--snowflake=false")
	for range 10 {
		ids, err := fetchIDs(third.base, "orders", 50)
		all.add(third.base, ids, err)
	}
	close(stop)
	wg.Wait()
	all.check(t)

	row, err := c.open(t).Tag(context.Background(), "orders")
	if err != nil || row.MaxID <= 1 {
		t.Fatalf("store c's row: %+v, %v; want it used by the instance that prefers it", row, err)
	}
	if v := setVersion(third); v != 2 {
		t.Fatalf("the instance started after the change serves under set version %d, want 2", v)
	}
}
