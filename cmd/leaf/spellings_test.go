package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// TestSpellingsAndUnknownTagsCostNothing: on MySQL, whose collations match
// "ORDERS" to the row "orders", a thousand spellings of one tag and
// hundreds of names with no row, all without a token, give no id, no
// buffer, no metric series and no change to the row.
func TestSpellingsAndUnknownTagsCostNothing(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	st := storetest.Open(t, store.MySQL, dsn)
	const tag = "orders-by-region"
	if _, err := st.CreateTag(ctx, segment.Tag{Name: tag, MaxID: 1, Step: segment.MaxStep}); err != nil {
		t.Fatal(err)
	}
	a := startApp(t, env{"LEAF_MYSQL_DSN": dsn, "LEAF_ADMIN_TOKEN": "t0ken-secret-of-the-test"}, "--snowflake=false")
	if code, body := testkit.MustGet(t, a.base+"/api/segment/get/"+tag); code != 200 || body != "1" {
		t.Fatalf("first id = %d %q", code, body)
	}
	_, metricsBefore := testkit.MustGet(t, a.base+"/metrics")
	rowBefore, err := st.Tag(ctx, tag)
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	for i := range 1000 { // every mix of case of the first ten letters
		b := []byte(tag)
		for j := range 10 {
			if i&(1<<j) != 0 && b[j] >= 'a' && b[j] <= 'z' {
				b[j] -= 'a' - 'A'
			}
		}
		if s := string(b); s != tag {
			names = append(names, s)
		}
	}
	names = append(names, tag+" ", tag+"  ")
	for i := range 500 {
		names = append(names, fmt.Sprintf("no-such-tag-%d", i))
	}
	for _, name := range names {
		code, body := testkit.MustGet(t, a.base+"/api/segment/get/"+url.PathEscape(name))
		if code != http.StatusNotFound || !strings.Contains(body, "unknown_tag") {
			t.Fatalf("%q = %d %s, want 404 unknown_tag", name, code, body)
		}
	}

	if code, body := testkit.MustGet(t, a.base+"/api/segment/get/"+tag); code != 200 || body != "2" {
		t.Fatalf("the tag's next id = %d %q, want 2: its ids stay in order", code, body)
	}
	rowAfter, err := st.Tag(ctx, tag)
	if err != nil || rowAfter.MaxID != rowBefore.MaxID {
		t.Fatalf("max_id moved from %d to %d (%v)", rowBefore.MaxID, rowAfter.MaxID, err)
	}
	_, segs := testkit.Get(a.base+"/api/admin/segments", "t0ken-secret-of-the-test")
	var snapshot struct {
		Segments []json.RawMessage `json:"segments"`
	}
	if err := json.Unmarshal([]byte(segs), &snapshot); err != nil || len(snapshot.Segments) != 1 {
		t.Fatalf("buffers after the flood: %v %s", err, segs)
	}
	_, metricsAfter := testkit.MustGet(t, a.base+"/metrics")
	if n := strings.Count(metricsAfter, "no-such-tag") + strings.Count(metricsAfter, "ORDERS"); n != 0 {
		t.Fatalf("%d metric lines name a tag with no row", n)
	}
	if len(metricsAfter) > 2*len(metricsBefore) {
		t.Fatalf("/metrics grew from %d to %d bytes", len(metricsBefore), len(metricsAfter))
	}
}
