package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/leafid/leaf/internal/testkit"
	leafv1 "github.com/leafid/leaf/proto/leaf/v1"
	"github.com/leafid/leaf/store/storetest"
)

const namesToken = "names-admin-token"

// eachDatabase runs fn with the environment of `leaf serve` on a fresh
// SQLite file, then on a fresh MySQL database.
func eachDatabase(t *testing.T, fn func(t *testing.T, e env)) {
	t.Helper()
	t.Run("SQLite", func(t *testing.T) {
		fn(t, env{"LEAF_SQLITE_PATH": filepath.Join(t.TempDir(), "leaf.db"), "LEAF_ADMIN_TOKEN": namesToken})
	})
	t.Run("MySQL", func(t *testing.T) {
		fn(t, env{"LEAF_MYSQL_DSN": storetest.MySQL(t), "LEAF_ADMIN_TOKEN": namesToken})
	})
}

// adminPost posts body to path with the admin token and returns the
// status and body.
func adminPost(t *testing.T, base, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+namesToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPaddedNamesOverHTTP: MySQL compares "inbox " equal to "inbox". A
// request for the padded name is a name of its own that does not exist,
// never the other's numbers; creating it is refused as a bad name, on
// every database alike.
func TestPaddedNamesOverHTTP(t *testing.T) {
	eachDatabase(t, func(t *testing.T, e env) {
		a := startApp(t, e, "--snowflake=false")
		if code, body := adminPost(t, a.base, "/api/admin/sequences", `{"space":"inbox","step":100,"sections":4}`); code != http.StatusCreated {
			t.Fatalf("create inbox: %d %s", code, body)
		}
		if code, body := adminPost(t, a.base, "/api/admin/tags", `{"tag":"orders"}`); code != http.StatusCreated {
			t.Fatalf("create orders: %d %s", code, body)
		}
		for _, c := range []struct {
			path, code string
			status     int
		}{
			{"/api/sequence/next/inbox%20/k", "unknown_space", http.StatusNotFound},
			{"/api/sequence/current/inbox%20/k", "unknown_space", http.StatusNotFound},
			{"/api/segment/get/orders%20", "unknown_tag", http.StatusNotFound},
			{"/api/segment/batch/orders%20?count=2", "unknown_tag", http.StatusNotFound},
			{"/api/segment/range/orders%20?count=2", "unknown_tag", http.StatusNotFound},
			{"/api/admin/tags/orders%20", "unknown_tag", http.StatusNotFound},
		} {
			code, body := testkit.Get(a.base+c.path, namesToken)
			if code != c.status || !strings.Contains(body, `"code":"`+c.code+`"`) {
				t.Errorf("GET %s: %d %s; want %d %s", c.path, code, body, c.status, c.code)
			}
		}
		for _, c := range []struct{ path, body, code string }{
			{"/api/admin/sequences", `{"space":"inbox ","step":100,"sections":4}`, "invalid_space"},
			{"/api/admin/sequences", `{"space":"outbox ","step":100,"sections":4}`, "invalid_space"},
			{"/api/admin/tags", `{"tag":"orders "}`, "invalid_tag"},
			{"/api/admin/tags", `{"tag":"payments "}`, "invalid_tag"},
			{"/api/admin/tags", `{"tag":"ordered ","ordered":true}`, "invalid_tag"},
			{"/api/admin/tags", `{"tag":"formatted ","format":"F-{seq}"}`, "invalid_tag"},
		} {
			code, body := adminPost(t, a.base, c.path, c.body)
			if code != http.StatusBadRequest || !strings.Contains(body, `"code":"`+c.code+`"`) || !strings.Contains(body, "end in a space") {
				t.Errorf("POST %s %s: %d %s; want 400 %s saying why", c.path, c.body, code, body, c.code)
			}
		}
	})
}

// TestPeriodRowsAreNotTags: the row inv@KEY numbers period KEY of the
// formatted tag inv. Asked for by its own name it is refused on every id
// route, over HTTP and gRPC, before the period begins as after, and none
// of its numbers is spent: inv goes
// on where it was. No tag of such a name can be created either.
func TestPeriodRowsAreNotTags(t *testing.T) {
	eachDatabase(t, func(t *testing.T, e env) {
		a := startApp(t, e, "--snowflake=false")
		if code, body := adminPost(t, a.base, "/api/admin/tags", `{"tag":"inv","step":10,"format":"INV-{date:20060102}-{seq}","reset":"day"}`); code != http.StatusCreated {
			t.Fatalf("create inv: %d %s", code, body)
		}
		get := func(want string) {
			t.Helper()
			code, body := testkit.MustGet(t, a.base+"/api/segment/get/inv")
			if code != http.StatusOK || !strings.HasSuffix(body, want) {
				t.Fatalf("inv: %d %s; want an id ending in %s", code, body, want)
			}
		}
		get("-1")
		key := time.Now().UTC().Format("20060102")
		row := "inv@" + key
		says := `biz tag "` + row + `" is the row of period ` + key + ` of formatted tag "inv"; ask for "inv"`
		// A period's row, begun (today's) or not (tomorrow's, no row yet),
		// is refused alike: never 404 for one and 400 for the other.
		nextKey := time.Now().UTC().AddDate(0, 0, 1).Format("20060102")
		for row, says := range map[string]string{
			row:              says,
			"inv@" + nextKey: `biz tag "inv@` + nextKey + `" is the row of period ` + nextKey + ` of formatted tag "inv"; ask for "inv"`,
		} {
			for _, path := range []string{"/api/segment/get/", "/api/segment/batch/", "/api/segment/range/"} {
				target := a.base + path + row + "?count=2"
				code, body := testkit.MustGet(t, target)
				var e struct {
					Error struct{ Code, Message string }
				}
				_ = json.Unmarshal([]byte(body), &e)
				if code != http.StatusBadRequest || e.Error.Code != "invalid_tag" || e.Error.Message != says {
					t.Errorf("GET %s: %d %s; want 400 invalid_tag saying %s", target, code, body, says)
				}
			}
		}
		cc, err := grpc.NewClient(strings.TrimPrefix(a.base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		for _, call := range []struct {
			method   string
			req, res any
		}{
			{"/leaf.v1.IdService/GetSegmentId", &leafv1.GetSegmentIdRequest{Tag: row}, new(leafv1.GetSegmentIdResponse)},
			{"/leaf.v1.IdService/BatchSegmentIds", &leafv1.BatchSegmentIdsRequest{Tag: row, Count: 2}, new(leafv1.BatchSegmentIdsResponse)},
			{"/leaf.v1.IdService/GetSegmentRange", &leafv1.GetSegmentRangeRequest{Tag: row, Count: 2}, new(leafv1.GetSegmentRangeResponse)},
		} {
			err := cc.Invoke(t.Context(), call.method, call.req, call.res)
			if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), says) {
				t.Errorf("%s: %v; want InvalidArgument saying %s", call.method, err, says)
			}
		}
		get("-2")
		tomorrow := "inv@" + time.Now().UTC().AddDate(0, 0, 1).Format("20060102")
		if code, body := adminPost(t, a.base, "/api/admin/tags", `{"tag":"`+tomorrow+`"}`); code != http.StatusBadRequest || !strings.Contains(body, `"code":"invalid_tag"`) {
			t.Errorf("create %s: %d %s; want 400 invalid_tag", tomorrow, code, body)
		}
		if code, body := adminPost(t, a.base, "/api/admin/tags", `{"tag":"inv@2026"}`); code != http.StatusCreated {
			t.Errorf("create inv@2026, no key of a daily tag: %d %s", code, body)
		}
	})
}
