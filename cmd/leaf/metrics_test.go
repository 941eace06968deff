package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestMetricsTags: a tag named by LEAF_METRICS_TAGS has series of its own
// though 21 busier tags leave it out of the 20 busiest; without the
// variable it has none, and the totals count every tag either way.
func TestMetricsTags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leaf.db")
	st := storetest.Open(t, store.SQLite, path)
	tags := []string{"quiet"}
	for i := range 21 {
		tags = append(tags, fmt.Sprintf("busy%02d", i))
	}
	for _, tag := range tags {
		if _, err := st.DB().Exec("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 100)", tag); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name  string
		env   env
		quiet bool
	}{
		{"named", env{"LEAF_SQLITE_PATH": path, "LEAF_METRICS_TAGS": "nosuchtag, quiet"}, true},
		{"not named", env{"LEAF_SQLITE_PATH": path}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := startApp(t, tt.env, "--snowflake=false")
			for _, tag := range tags {
				n := 2
				if tag == "quiet" {
					n = 1
				}
				if code, body := testkit.MustGet(t, fmt.Sprintf("%s/api/segment/batch/%s?count=%d", a.base, tag, n)); code != 200 {
					t.Fatalf("batch of %s = %d %s", tag, code, body)
				}
			}
			_, body := testkit.MustGet(t, a.base+"/metrics")
			exported := "20"
			if tt.quiet {
				exported = "21"
			}
			for _, want := range []string{
				"leaf_segment_tags 22\n",
				"leaf_segment_tags_exported " + exported + "\n",
				"leaf_segment_all_ids_issued_total 43\n",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("/metrics lacks %q", want)
				}
			}
			if got := strings.Contains(body, `leaf_segment_step{tag="quiet"}`); got != tt.quiet {
				t.Errorf("quiet has series: %v, want %v", got, tt.quiet)
			}
			if strings.Contains(body, "nosuchtag") {
				t.Error("a tag named but never used has series")
			}
		})
	}
}
