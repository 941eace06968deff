package main

// Every kind of id on a set of three independent stores, served by two
// instances that prefer different stores: plain tags striped over the
// stores; ordered, formatted and opaque tags and sequences in the home
// store alone, served by both instances.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

func TestServeEveryKindOnThreeStores(t *testing.T) {
	inEmptyDir(t)
	defer clusterClient.CloseIdleConnections()
	s := testStores(t, []string{store.MySQL, store.SQLite}, 3)
	a, b, c := s[0], s[1], s[2]
	leafOK(t, storesEnv(a, b, c), "store", "init")
	leafOK(t, storesEnv(a, b, c), "tag", "add", "plain", "--step", "100")
	// The command line makes what lives in the home store there.
	if out := leafOK(t, storesEnv(b, c, a), "tag", "add", "cli", "--format", "CLI-{seq:3!}"); !strings.Contains(out, "home store") {
		t.Fatalf("tag add of a capped tag: %s", out)
	}
	leafOK(t, storesEnv(c, a, b), "sequence", "add", "box", "--step", "100", "--sections", "4")
	if _, errOut, err := runSplit(t, storesEnv(a, b, c), "tag", "add", "plain", "--ordered"); err == nil || !strings.Contains(err.Error()+errOut, "exists") {
		t.Fatalf("an ordered tag of the name of a plain one: %v %s", err, errOut)
	}

	const token = "t0ken-of-the-test-00"
	e := storesEnv(a, b, c)
	e["LEAF_ADMIN_TOKEN"], e["LEAF_OPAQUE_KEY"] = token, testKey
	first := startApp(t, e, "--sequence-lease", "2s")
	e2 := storesEnv(b, c, a)
	e2["LEAF_ADMIN_TOKEN"], e2["LEAF_OPAQUE_KEY"] = token, testKey
	second := startApp(t, e2, "--sequence-lease", "2s", "--snowflake=false")
	for _, body := range []string{
		`{"tag":"inv","format":"INV-{date:20060102}-{seq:3!}","reset":"day","step":10}`,
		`{"tag":"ord","ordered":true,"step":10}`,
		`{"tag":"fo","format":"FO-{seq:6}","step":10}`,
		`{"tag":"day","format":"D-{date:20060102}-{seq:6}","reset":"day","step":10}`,
		`{"tag":"opq","opaque":63,"step":10}`,
	} {
		if code, out := testkit.Post(second.base+"/api/admin/tags", token, body); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", body, code, out)
		}
	}
	if code, out := testkit.Patch(first.base+"/api/admin/tags/plain", token, `{"format":"P-{seq}"}`); code != http.StatusConflict || !strings.Contains(out, "format_fixed") {
		t.Fatalf("a plain tag of a set given a format: %d %s", code, out)
	}
	nodes := []*testApp{first, second}
	last := map[string]int64{}
	texts := map[string]bool{}
	for i := range 40 {
		n := nodes[i%2]
		for _, tag := range []string{"inv", "ord", "cli"} {
			code, body, err := ownedGet(n.base, "/api/segment/get/"+tag)
			if err != nil || code != http.StatusOK {
				t.Fatalf("%s from %s: %d %s %v", tag, n.base, code, body, err)
			}
			v := int64(0)
			if tag == "ord" {
				v = mustInt(t, body)
			} else {
				v = seqOf(t, body)
			}
			if v != last[tag]+1 {
				t.Fatalf("%s: %s after %d: in order from both instances, with no gap", tag, body, last[tag])
			}
			last[tag] = v
		}
		for _, tag := range []string{"fo", "day", "opq", "plain"} {
			code, body, err := ownedGet(n.base, "/api/segment/get/"+tag)
			if err != nil || code != http.StatusOK {
				t.Fatalf("%s from %s: %d %s %v", tag, n.base, code, body, err)
			}
			if tag == "day" || tag == "fo" {
				if texts[body] {
					t.Fatalf("%s: %s twice", tag, body)
				}
				texts[body] = true
				// The home store's row, whatever its steps: a number
				// striped over the set would lie in a block of another
				// store, the first of which begins at DefaultBlock.
				if v := seqOf(t, body); v >= storeset.DefaultBlock {
					t.Fatalf("%s: %s is not numbered in the home store alone", tag, body)
				}
			}
		}
		code, body, err := ownedGet(n.base, "/api/sequence/next/box/k")
		if err != nil || code != http.StatusOK {
			t.Fatalf("sequence from %s: %d %s %v", n.base, code, body, err)
		}
		if v := mustInt(t, body); v <= last["box"] {
			t.Fatalf("sequence: %d after %d", v, last["box"])
		} else {
			last["box"] = v
		}
	}
	// What lives in the home store has no row anywhere else.
	ctx := context.Background()
	for _, ts := range []testStore{b, c} {
		st := storetest.Open(t, ts.dialect, ts.dsn)
		day := "day@" + time.Now().UTC().Format("20060102")
		for _, tag := range []string{"inv", "ord", "fo", "opq", "cli", "day", day} {
			if _, err := st.Tag(ctx, tag); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("store %s has a row of %s: %v", ts.name, tag, err)
			}
		}
		if spaces, err := st.Spaces(ctx); err != nil || len(spaces) != 0 {
			t.Fatalf("store %s has spaces %v, %v", ts.name, spaces, err)
		}
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var v int64
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("not a number: %q", s)
		}
		v = v*10 + int64(r-'0')
	}
	return v
}
