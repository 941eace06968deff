package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

const testKey = "the fleet's opaque key - never logged"

func TestTagAddFormattedAndOpaque(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leaf.db")
	e := env{"LEAF_SQLITE_PATH": path}
	out, _, err := runSplit(t, e, "tag", "add", "orders", "--format", "ORD-{date:20060102}-{seq:6}", "--reset", "day", "--time-zone", "Asia/Shanghai")
	if err != nil || !strings.Contains(out, "created orders in sqlite "+path+": format ORD-{date:20060102}-{seq:6}, reset day, time zone Asia/Shanghai") {
		t.Fatalf("tag add formatted: %v\n%s", err, out)
	}
	e["LEAF_OPAQUE_KEY"] = testKey
	out, errOut, err := runSplit(t, e, "tag", "add", "users", "--opaque", "53")
	if err != nil || !strings.Contains(out, "opaque over 53 bits, key id "+bizid.TagKeyID(bizid.KeyID([]byte(testKey)))) ||
		strings.Contains(out+errOut, testKey) {
		t.Fatalf("tag add opaque: %v\n%s%s", err, out, errOut)
	}
	st := storetest.Open(t, store.SQLite, path)
	sets, err := st.TagSettings(context.Background())
	if err != nil || len(sets) != 2 {
		t.Fatalf("settings %+v, %v", sets, err)
	}

	delete(e, "LEAF_OPAQUE_KEY")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"a", "--format", "ORD-{date:20060102}"}, "no {seq}"},
		{[]string{"a", "--format", "ORD-{date:200601}-{seq}", "--reset", "day"}, "same date"},
		{[]string{"a", "--opaque", "63"}, "LEAF_OPAQUE_KEY"},
		{[]string{"a", "--opaque", "63", "--opaque-key", "short"}, "at least 16"},
		{[]string{"a", "--format", "A{seq}", "--opaque", "63", "--opaque-key", testKey}, "not both"},
	} {
		_, errOut, err := runSplit(t, e, append([]string{"tag", "add"}, tc.args...)...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error()+errOut, tc.says) {
			t.Errorf("tag add %q: %v %s, want a usage error saying %q", tc.args, err, errOut, tc.says)
		}
		if err != nil && strings.Contains(err.Error()+errOut, `"short"`) {
			t.Errorf("the refused key is shown: %v %s", err, errOut)
		}
	}
}

// TestServeFormattedAndOpaque: leaf serve issues a formatted tag's texts
// and an opaque tag's ids, reveals them, and never logs the key.
func TestServeFormattedAndOpaque(t *testing.T) {
	const token = "adm1n-token-of-the-test"
	path := filepath.Join(t.TempDir(), "leaf.db")
	a := startApp(t, env{"LEAF_OPAQUE_KEY": testKey + "," + testKey + " (old)"},
		"--sqlite-path", path, "--admin-token", token, "--snowflake=false", "--log-level", "debug")
	post := func(body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, a.base+"/api/admin/tags", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create %s: %d %s", body, resp.StatusCode, b)
		}
	}
	post(`{"tag":"orders","format":"ORD-{date:20060102}-{seq:6}","reset":"day","time_zone":"Asia/Shanghai"}`)
	post(`{"tag":"users","opaque":63}`)

	today := time.Now().In(mustZone(t, "Asia/Shanghai")).Format("20060102")
	code, body := testkit.MustGet(t, a.base+"/api/segment/get/orders")
	if code != 200 || !regexp.MustCompile(`^ORD-\d{8}-000001$`).MatchString(body) || body[4:12] < today {
		t.Fatalf("formatted id: %d %q", code, body)
	}
	code, body = testkit.MustGet(t, a.base+"/api/segment/get/users")
	if code != 200 || body == "1" {
		t.Fatalf("opaque id: %d %q", code, body)
	}
	code, rev := testkit.Get(a.base+"/api/admin/tags/users/reveal/"+body, token)
	if code != 200 || !strings.Contains(rev, `"number":"1"`) {
		t.Fatalf("reveal: %d %s", code, rev)
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	if logs := a.logs.String(); strings.Contains(logs, testKey) || !strings.Contains(logs, "opaque_keys=2") {
		t.Fatalf("the logs show the key, or not how many keys:\n%s", logs)
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skip("no tz data:", err)
	}
	return loc
}

// TestServePrunesOldPeriods: leaf serve prunes, at its start and then
// hourly, the rows of periods that ended more than --period-grace ago,
// and keeps the others.
func TestServePrunesOldPeriods(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leaf.db")
	st := storetest.Open(t, store.SQLite, path)
	set := bizid.Settings{Format: "ORD-{date:20060102}-{seq}", Reset: bizid.Day}
	if _, err := st.CreateSpecialTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 10}, set); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format("20060102")
	for _, key := range []string{"20200101", "20200102", today} {
		if err := st.EnsurePeriod(ctx, "orders", key); err != nil {
			t.Fatal(err)
		}
	}
	a := startApp(t, env{}, "--sqlite-path", path, "--snowflake=false", "--period-grace", "48h")
	// The prune raises the mark, then deletes the rows below it.
	testkit.WaitFor(t, 10*time.Second, "the first prune", func() bool {
		_, err1 := st.Tag(ctx, "orders@20200101")
		_, err2 := st.Tag(ctx, "orders@20200102")
		return errors.Is(err1, segment.ErrUnknownTag) && errors.Is(err2, segment.ErrUnknownTag)
	})
	for key, want := range map[string]bool{"20200101": false, "20200102": false, today: true} {
		if _, err := st.Tag(ctx, "orders@"+key); (err == nil) != want {
			t.Errorf("row of %s: %v, want kept %v", key, err, want)
		}
	}
	if code, body := testkit.MustGet(t, a.base+"/api/segment/get/orders"); code != 200 || !strings.HasPrefix(body, "ORD-") {
		t.Fatalf("after the prune: %d %s", code, body)
	}
	if rows, err := st.LookupTags(ctx, []string{"orders"}); err != nil || rows["orders"].Settings.PrunedBefore < "20200103" {
		t.Fatalf("the mark is %q (%v)", rows["orders"].Settings.PrunedBefore, err)
	}
	if err := st.EnsurePeriod(ctx, "orders", "20200101"); !errors.Is(err, bizid.ErrPeriodClosed) {
		t.Fatalf("a pruned period: %v", err)
	}
}
