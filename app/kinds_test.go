package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

// answer is one call's status and body, and which instance answered.
type answer struct {
	from string
	code int
	body string
}

// kindCase is a kind of tag: the settings it is created with, the name
// asked for it (its own, or its period's row), and what an answer of that
// kind looks like.
type kindCase struct {
	kind     string
	settings string
	row      func(tag string) string // the name asked; nil: the tag's
	ok       func(a answer) error    // an answer of 200 of this kind
	ordered  bool                    // the ids strictly increase across the fleet
}

// kindCases are the kinds other than plain.
func kindCases() []kindCase {
	text := func(prefix string) func(a answer) error {
		return func(a answer) error {
			if !strings.HasPrefix(a.body, prefix) {
				return fmt.Errorf("not a text %s…", prefix)
			}
			return nil
		}
	}
	return []kindCase{
		{kind: "ordered", settings: `"ordered":true`, ordered: true, ok: func(answer) error { return nil }},
		{kind: "capped", settings: `"format":"C-{date:20060102}-{seq:4!}","reset":"day"`, ok: text("C-")},
		{kind: "formatted", settings: `"format":"F-{seq:8}"`, ok: text("F-")},
		{kind: "opaque", settings: `"opaque":63`, ok: func(a answer) error {
			// A raw number of the tag's row is small: its first ranges
			// start at 1.
			if n, err := strconv.ParseInt(a.body, 10, 64); err != nil || n < 1<<40 {
				return fmt.Errorf("not an opaque id")
			}
			return nil
		}},
		{kind: "period", settings: `"format":"P-{date:20060102}-{seq:6}","reset":"day"`,
			row: func(tag string) string { return tag + "@" + time.Now().UTC().Format("20060102") },
			ok:  func(answer) error { return fmt.Errorf("a period's row served as a tag") }},
	}
}

// TestTagCreatedWhileAsked: a tag created through one instance while
// another is asked for its name keeps its kind on both from its first
// answer. Callers ask instance C for a name (404 until it exists) while
// instance B creates the tag, then calls alternate between B and C: every
// answer of C is of the tag's kind (ordered numbers that keep increasing
// across B's and C's, texts of a formatted tag, opaque ids, a period's row
// refused), never the numbers of a plain tag, and no id is issued twice.
// An owned tag may be refused as unavailable while its owner changes
// hands, never answered as another kind.
func TestTagCreatedWhileAsked(t *testing.T) {
	t.Run("mysql", func(t *testing.T) {
		tagCreatedWhileAsked(t, StoreConfig{MySQLDSN: storetest.MySQL(t)})
	})
	t.Run("set", func(t *testing.T) {
		ctx := context.Background()
		var entries []StoreEntry
		var named []storeset.Named
		for _, name := range []string{"a", "b"} {
			p := storetest.SQLite(t)
			entries = append(entries, StoreEntry{Name: name, Path: p})
			named = append(named, storeset.Named{Name: name, Store: storetest.Open(t, store.SQLite, p)})
		}
		if _, err := storeset.Init(ctx, named); err != nil {
			t.Fatal(err)
		}
		tagCreatedWhileAsked(t, StoreConfig{Set: entries})
	})
}

// tagCreatedWhileAsked is TestTagCreatedWhileAsked on two instances of
// stores.
func tagCreatedWhileAsked(t *testing.T, stores StoreConfig) {
	var srv [2]string
	for i := range srv {
		cfg := testConfig(t)
		cfg.StoreConfig = stores
		cfg.OpaqueKeys = [][]byte{[]byte("a key of the fleet's opaque tags")}
		cfg.Migrate = i == 0
		srv[i] = "http://" + serving(t, cfg).Addr()
	}
	b, c := srv[0], srv[1]
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 10 * time.Second}
	call := func(base, name string) answer {
		resp, err := client.Get(base + "/api/segment/get/" + name)
		if err != nil {
			return answer{from: base, code: -1, body: err.Error()}
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return answer{from: base, code: resp.StatusCode, body: strings.TrimSpace(string(body))}
	}
	create := func(t *testing.T, tag, settings string) {
		req, err := http.NewRequest(http.MethodPost, b+"/api/admin/tags",
			strings.NewReader(fmt.Sprintf(`{"tag":%q,"step":10,%s}`, tag, settings)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer admin")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create %s {%s} = %d %s", tag, settings, resp.StatusCode, body)
		}
	}

	const rounds, askers, alternations = 12, 3, 40
	for _, k := range kindCases() {
		t.Run(k.kind, func(t *testing.T) {
			wrong := 0
			for round := range rounds {
				tag := fmt.Sprintf("%s_%d", k.kind, round)
				name := tag
				if k.row != nil {
					name = k.row(tag)
				}
				var (
					mu     sync.Mutex
					asked  []answer
					wg     sync.WaitGroup
					done   = make(chan struct{})
					before = make(chan struct{}, askers)
				)
				for range askers {
					wg.Go(func() {
						for i := 0; ; i++ {
							select {
							case <-done:
								return
							default:
							}
							a := call(c, name)
							mu.Lock()
							asked = append(asked, a)
							mu.Unlock()
							if i == 0 {
								before <- struct{}{}
							}
						}
					})
				}
				for range askers {
					<-before
				}
				create(t, tag, k.settings)
				if k.row != nil {
					if a := call(b, tag); a.code != http.StatusOK {
						t.Fatalf("%s on B = %d %s", tag, a.code, a.body)
					}
				}
				var alternated []answer
				for i := range 2 * alternations {
					alternated = append(alternated, call(srv[i%2], name))
				}
				close(done)
				wg.Wait()
				wrong += checkKind(t, k, tag, asked, alternated)
			}
			if wrong > 0 {
				t.Errorf("%d of %d rounds served %s tags as another kind", wrong, rounds, k.kind)
			}
		})
	}
}

// checkKind reports the answers that are not of k's kind, and ids
// issued twice; it returns 1 when it found any.
func checkKind(t *testing.T, k kindCase, tag string, asked, alternated []answer) int {
	t.Helper()
	var faults []string
	seen := map[string]string{}
	last := int64(-1)
	for i, a := range append(asked, alternated...) {
		inAlternation := i >= len(asked)
		switch {
		case a.code == http.StatusOK:
			if err := k.ok(a); err != nil {
				faults = append(faults, fmt.Sprintf("%s answered %s: %v", a.from, a.body, err))
			}
			if from, dup := seen[a.body]; dup {
				faults = append(faults, fmt.Sprintf("%s issued twice (%s and %s)", a.body, from, a.from))
			}
			seen[a.body] = a.from
			if n, err := strconv.ParseInt(a.body, 10, 64); k.ordered && inAlternation && err == nil {
				if n <= last {
					faults = append(faults, fmt.Sprintf("%s answered %d after %d", a.from, n, last))
				}
				last = n
			}
		case a.code == http.StatusNotFound && !inAlternation:
			// asked before the tag was created
		case k.row != nil && a.code == http.StatusBadRequest:
			// a period's row, refused by its name
		case a.code == http.StatusServiceUnavailable && strings.Contains(a.body, `"unavailable"`) && k.kind != "period":
			// an owned tag whose owner is changing hands: the first
			// rounds after the instances start hand the tags they
			// took over to the member each belongs to, and a call
			// meanwhile is refused, to be retried (Retry-After); no id
			// of another kind
		default:
			faults = append(faults, fmt.Sprintf("%s answered %d %s", a.from, a.code, a.body))
		}
	}
	if len(faults) == 0 {
		return 0
	}
	t.Logf("%s: %d answers not of its kind, the first: %s", tag, len(faults), strings.Join(faults[:min(3, len(faults))], "; "))
	return 1
}
