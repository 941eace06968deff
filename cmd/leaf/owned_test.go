package main

// Formatted tags served by one owner at a time (a capped format, or
// "ordered"), on two `leaf serve` instances on one MySQL database: every
// number of a period is issued, from either instance, in order; a refusal
// takes nothing and a full period costs no write; a clean stop of the
// owner leaves no gap.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store/storetest"
)

// ownedGet asks node for path; 503s (the owner moving) are retried.
func ownedGet(base, path string) (int, string, error) {
	for try := 0; ; try++ {
		resp, err := clusterClient.Get(base + path)
		if err != nil {
			return 0, "", err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && try < 400 {
			time.Sleep(25 * time.Millisecond)
			continue
		}
		return resp.StatusCode, string(body), nil
	}
}

// seqOf is the number at the end of a text.
func seqOf(t *testing.T, text string) int64 {
	t.Helper()
	i := strings.LastIndexByte(text, '-')
	n, err := strconv.ParseInt(text[i+1:], 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	return n
}

func TestCappedAcrossInstances(t *testing.T) {
	dsn := storetest.MySQL(t)
	defer clusterClient.CloseIdleConnections()
	e := env{"LEAF_MYSQL_DSN": dsn}
	if out, err := runCmd(t, e, "tag", "add", "inv", "--format", "INV-{date:20060102}-{seq:2!}", "--reset", "day"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	day := time.Now().UTC().Format("20060102")
	// --capped-share 1: a call may ask for a whole period here, so that
	// the refusals below are the period's own (the share is
	// TestCappedShare's).
	nodes := []*testApp{
		startApp(t, e, "--sequence-lease", "2s", "--snowflake=false", "--capped-share", "1"),
		startApp(t, e, "--sequence-lease", "2s", "--snowflake=false", "--capped-share", "1"),
	}
	get := func(i int, path string) (int, string) {
		t.Helper()
		code, body, err := ownedGet(nodes[i%2].base, path)
		if err != nil {
			t.Fatal(err)
		}
		if code == http.StatusOK && !strings.Contains(body, day) {
			t.Skipf("the day changed during the test: %s", body)
		}
		return code, body
	}
	// A batch larger than the period holds is refused and takes nothing.
	if code, body := get(1, "/api/segment/batch/inv?count=100"); code != http.StatusConflict || !strings.Contains(body, "sequence_full") {
		t.Fatalf("a batch of 100 of {seq:2!}: %d %s", code, body)
	}
	var last int64
	for i := range 90 {
		code, body := get(i, "/api/segment/get/inv")
		if code != http.StatusOK {
			t.Fatalf("id %d from node %d: %d %s", i+1, i%2, code, body)
		}
		if n := seqOf(t, body); n != last+1 {
			t.Fatalf("%s from node %d after %d: every number in order, from either instance", body, i%2, last)
		} else {
			last = n
		}
	}
	// A batch too big for what is left is refused and takes nothing.
	if code, body := get(0, "/api/segment/batch/inv?count=10"); code != http.StatusConflict || !strings.Contains(body, "9 are left") {
		t.Fatalf("a batch of 10 with 9 left: %d %s", code, body)
	}
	code, body := get(1, "/api/segment/batch/inv?count=9")
	if code != http.StatusOK || !strings.Contains(body, "INV-"+day+"-91") || !strings.Contains(body, "INV-"+day+"-99") {
		t.Fatalf("the last 9: %d %s", code, body)
	}
	// A full period answers from memory: no write, on either instance.
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	maxID := func() (v int64) {
		t.Helper()
		if err := db.QueryRow(`SELECT max_id FROM leaf_alloc WHERE biz_tag = ?`, "inv@"+day).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := maxID()
	if before != 100 {
		t.Fatalf("max_id of the full period is %d, want 100: nothing taken past the cap", before)
	}
	for i := range 30 {
		if code, body := get(i, "/api/segment/get/inv"); code != http.StatusConflict || !strings.Contains(body, "sequence_full") {
			t.Fatalf("the 100th id: %d %s", code, body)
		}
	}
	if after := maxID(); after != before {
		t.Fatalf("30 refusals moved max_id from %d to %d", before, after)
	}
}

// TestOrderedFormattedAcrossInstances: an ordered formatted tag's numbers
// follow the order of the requests across two instances, and the owner's
// clean stop hands back what it had not issued: no gap. A capped tag made
// before such tags were served by one owner (no lease row) becomes so.
func TestOrderedFormattedAcrossInstances(t *testing.T) {
	dsn := storetest.MySQL(t)
	defer clusterClient.CloseIdleConnections()
	e := env{"LEAF_MYSQL_DSN": dsn}
	for _, args := range [][]string{
		{"tag", "add", "f", "--format", "F-{seq}", "--ordered", "--step", "50"},
		{"tag", "add", "old", "--format", "OLD-{seq:3!}", "--step", "50"},
	} {
		if out, err := runCmd(t, e, args...); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM leaf_seq_section WHERE space = 'old' AND section = -1`); err != nil {
		t.Fatal(err)
	}
	nodes := []*testApp{
		startApp(t, e, "--sequence-lease", "2s", "--snowflake=false"),
		startApp(t, e, "--sequence-lease", "2s", "--snowflake=false"),
	}
	last := map[string]int64{}
	take := func(live []*testApp, tag string, n int) {
		t.Helper()
		for i := range n {
			code, body, err := ownedGet(live[i%len(live)].base, "/api/segment/get/"+tag)
			if err != nil || code != http.StatusOK {
				t.Fatalf("%s: %d %s %v", tag, code, body, err)
			}
			got := seqOf(t, body)
			if tag == "old" && last[tag] == 0 && got <= 51 {
				// Before it became served by one owner, the allocator's
				// first load may have taken one range of its row, once.
				last[tag] = got - 1
			}
			if got != last[tag]+1 {
				t.Fatalf("%s: %s after %d", tag, body, last[tag])
			}
			last[tag]++
		}
	}
	take(nodes, "f", 30)
	take(nodes, "old", 30)
	owner := -1
	for i, n := range nodes {
		if n.Sequencer().Stats().SectionsOwned > 0 {
			owner = i
		}
	}
	if owner < 0 {
		t.Fatal("no instance owns the tags")
	}
	if err := nodes[owner].stop(); err != nil {
		t.Fatal(err)
	}
	live := []*testApp{nodes[1-owner]}
	take(live, "f", 10)
	take(live, "old", 10)
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM leaf_seq_section WHERE space = 'old' AND section = -1`).Scan(&n); err != nil || n != 1 {
		t.Fatal(fmt.Errorf("lease rows of the old capped tag: %d, %v", n, err))
	}
}

// TestPatchedToCapped: a plain tag given a capped format by PATCH is
// served by one owner from its next request on: no instance's first load
// takes a range of its row, which would use its numbers up.
func TestPatchedToCapped(t *testing.T) {
	dsn := storetest.MySQL(t)
	defer clusterClient.CloseIdleConnections()
	const token = "t0ken-of-the-test-00"
	e := env{"LEAF_MYSQL_DSN": dsn, "LEAF_ADMIN_TOKEN": token}
	nodes := []*testApp{
		startApp(t, e, "--sequence-lease", "2s", "--snowflake=false"),
		startApp(t, e, "--sequence-lease", "2s", "--snowflake=false"),
	}
	if code, body := testkit.Post(nodes[0].base+"/api/admin/tags", token, `{"tag":"p"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := testkit.Patch(nodes[0].base+"/api/admin/tags/p", token, `{"format":"P-{seq:2!}"}`); code != http.StatusOK {
		t.Fatalf("patch: %d %s", code, body)
	}
	for i := range 6 {
		code, body, err := ownedGet(nodes[(i+1)%2].base, "/api/segment/get/p")
		if err != nil || code != http.StatusOK {
			t.Fatalf("id %d: %d %s %v", i+1, code, body, err)
		}
		if want := fmt.Sprintf("P-%02d", i+1); body != want {
			t.Fatalf("id %d = %s, want %s: every number of the capped tag, in order", i+1, body, want)
		}
	}
}
