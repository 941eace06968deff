package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/leafid/leaf/segment"
)

func TestAdminNotMountedWithoutToken(t *testing.T) {
	v := newEnv(t, func(c *envConfig) { c.AdminToken = "" })
	tests := []struct {
		name, method, target string
	}{
		{"list", http.MethodGet, "/api/admin/tags"},
		{"create", http.MethodPost, "/api/admin/tags"},
		{"get", http.MethodGet, "/api/admin/tags/orders"},
		{"patch", http.MethodPatch, "/api/admin/tags/orders"},
		{"segments", http.MethodGet, "/api/admin/segments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Even a request carrying some token gets 404: there is no
			// admin API to authenticate against.
			wantError(t, v.do(t, tt.method, tt.target, strings.NewReader(`{}`), withToken("")), 404, "not_found")
		})
	}
}

func TestAdminAuth(t *testing.T) {
	tests := []struct {
		name   string
		header string
		status int
	}{
		{"no header", "", 401},
		{"wrong token", "Bearer nope", 401},
		{"token as prefix", "Bearer " + testToken + "x", 401},
		{"token prefix", "Bearer " + testToken[:5], 401},
		{"basic scheme", "Basic " + testToken, 401},
		{"no scheme", testToken, 401},
		{"empty bearer", "Bearer ", 401},
		{"right token", "Bearer " + testToken, 200},
		{"scheme case-insensitive", "bearer " + testToken, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			rec := v.do(t, http.MethodGet, "/api/admin/tags", nil, func(r *http.Request) {
				if tt.header != "" {
					r.Header.Set("Authorization", tt.header)
				}
			})
			if tt.status == 401 {
				wantError(t, rec, 401, "unauthorized")
				if rec.Header().Get("WWW-Authenticate") == "" {
					t.Errorf("401 without WWW-Authenticate")
				}
			} else if rec.Code != tt.status {
				t.Fatalf("status = %d; %s", rec.Code, rec.Body)
			}
			if strings.Contains(v.logs.String(), testToken) {
				t.Errorf("token logged: %s", v.logs)
			}
		})
	}
}

func TestAdminRoutesNeedToken(t *testing.T) {
	v := newEnv(t)
	for _, r := range [][2]string{
		{http.MethodPost, "/api/admin/tags"}, {http.MethodGet, "/api/admin/tags"},
		{http.MethodGet, "/api/admin/tags/orders"}, {http.MethodPatch, "/api/admin/tags/orders"},
		{http.MethodGet, "/api/admin/segments"},
	} {
		t.Run(r[0]+" "+r[1], func(t *testing.T) {
			wantError(t, v.do(t, r[0], r[1], strings.NewReader(`{"tag":"x"}`)), 401, "unauthorized")
		})
	}
}

func TestAdminTags(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		target     string
		body       string
		status     int
		code       string // for errors
		wantSubstr string // for successes
	}{
		{name: "create with defaults", method: "POST", target: "/api/admin/tags", body: `{"tag":"payments"}`, status: 201,
			wantSubstr: `{"tag":"payments","max_id":"1","step":1000,"description":"","update_time":"2026-01-02T03:04:05Z"}`},
		{name: "create with everything", method: "POST", target: "/api/admin/tags",
			body: `{"tag":"a.b_c:d-E9","step":50,"max_id":9007199254740993,"description":"big"}`, status: 201,
			wantSubstr: `"max_id":"9007199254740993","step":50,"description":"big"`},
		{name: "create with max_id string", method: "POST", target: "/api/admin/tags",
			body: `{"tag":"s","max_id":"9223372036854775000"}`, status: 201, wantSubstr: `"max_id":"9223372036854775000"`},
		// The document declares a step as a number and a max_id as a
		// string; the other form of each is accepted as well.
		{name: "create step as digits", method: "POST", target: "/api/admin/tags",
			body: `{"tag":"st","step":"50"}`, status: 201, wantSubstr: `"step":50`},
		{name: "create with 256-character description", method: "POST", target: "/api/admin/tags",
			body: `{"tag":"d","description":"` + strings.Repeat("é", 256) + `"}`, status: 201, wantSubstr: `"tag":"d"`},
		{name: "create existing", method: "POST", target: "/api/admin/tags", body: `{"tag":"orders"}`, status: 409, code: "tag_exists"},
		{name: "create with spaces and UTF-8", method: "POST", target: "/api/admin/tags", body: `{"tag":"订单 v2/été"}`, status: 201, wantSubstr: `"tag":"订单 v2/été"`},
		{name: "create control character", method: "POST", target: "/api/admin/tags", body: `{"tag":"a\u0001b"}`, status: 400, code: "invalid_tag"},
		{name: "create dot-dot", method: "POST", target: "/api/admin/tags", body: `{"tag":".."}`, status: 400, code: "invalid_tag"},
		{name: "create no name", method: "POST", target: "/api/admin/tags", body: `{"step":5}`, status: 400, code: "invalid_tag"},
		{name: "create long name", method: "POST", target: "/api/admin/tags", body: `{"tag":"` + strings.Repeat("x", 129) + `"}`, status: 400, code: "invalid_tag"},
		{name: "create step 0", method: "POST", target: "/api/admin/tags", body: `{"tag":"x","step":0}`, status: 400, code: "invalid_request"},
		{name: "create step too big", method: "POST", target: "/api/admin/tags", body: `{"tag":"x","step":1000001}`, status: 400, code: "invalid_request"},
		{name: "create max_id 0", method: "POST", target: "/api/admin/tags", body: `{"tag":"x","max_id":0}`, status: 400, code: "invalid_request"},
		{name: "create max_id negative string", method: "POST", target: "/api/admin/tags", body: `{"tag":"x","max_id":"-5"}`, status: 400, code: "invalid_request"},

		{name: "list", method: "GET", target: "/api/admin/tags", status: 200,
			wantSubstr: `{"tags":[{"tag":"orders","max_id":"2001","step":1000,"description":"order ids","update_time":"2026-01-02T03:04:05Z"}]}`},
		{name: "get", method: "GET", target: "/api/admin/tags/orders", status: 200, wantSubstr: `"tag":"orders","max_id":"2001"`},
		{name: "get unknown", method: "GET", target: "/api/admin/tags/nosuch", status: 404, code: "unknown_tag"},
		{name: "get invalid", method: "GET", target: "/api/admin/tags/a%FF", status: 400, code: "invalid_tag"},

		{name: "patch step", method: "PATCH", target: "/api/admin/tags/orders", body: `{"step":2000}`, status: 200, wantSubstr: `"step":2000`},
		{name: "patch description", method: "PATCH", target: "/api/admin/tags/orders", body: `{"description":"new"}`, status: 200, wantSubstr: `"description":"new"`},
		{name: "patch empty description", method: "PATCH", target: "/api/admin/tags/orders", body: `{"description":""}`, status: 200, wantSubstr: `"description":""`},
		{name: "patch raise max_id", method: "PATCH", target: "/api/admin/tags/orders", body: `{"max_id":"5000"}`, status: 200, wantSubstr: `"max_id":"5000"`},
		{name: "patch lower max_id", method: "PATCH", target: "/api/admin/tags/orders", body: `{"max_id":10}`, status: 400, code: "invalid_request"},
		{name: "patch max_id 0", method: "PATCH", target: "/api/admin/tags/orders", body: `{"max_id":0}`, status: 400, code: "invalid_request"},
		{name: "patch bad step", method: "PATCH", target: "/api/admin/tags/orders", body: `{"step":-1}`, status: 400, code: "invalid_request"},
		{name: "patch nothing", method: "PATCH", target: "/api/admin/tags/orders", body: `{}`, status: 400, code: "invalid_request"},
		{name: "patch unknown", method: "PATCH", target: "/api/admin/tags/nosuch", body: `{"step":5}`, status: 404, code: "unknown_tag"},
		{name: "patch invalid name", method: "PATCH", target: "/api/admin/tags/a%FF", body: `{"step":5}`, status: 400, code: "invalid_tag"},

		{name: "segments", method: "GET", target: "/api/admin/segments", status: 200},
		{name: "delete is not allowed", method: "DELETE", target: "/api/admin/tags/orders", status: 405, code: "method_not_allowed"},
		{name: "unknown admin path", method: "GET", target: "/api/admin/nope", status: 404, code: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			rec := v.admin(t, tt.method, tt.target, tt.body)
			if tt.code != "" {
				wantError(t, rec, tt.status, tt.code)
				return
			}
			if rec.Code != tt.status {
				t.Fatalf("status = %d; body %s", rec.Code, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), tt.wantSubstr) {
				t.Errorf("body %s lacks %s", rec.Body, tt.wantSubstr)
			}
		})
	}
}

func TestAdminSegmentsShape(t *testing.T) {
	v := newEnv(t, func(c *envConfig) { c.Segments = newFakeSegments("orders") })
	var out struct {
		Segments []struct {
			Tag      string `json:"tag"`
			Segments [2]*struct {
				Start, End, Next, Remaining string
				LoadedAt                    string `json:"loaded_at"`
			} `json:"segments"`
			Step     int64  `json:"step"`
			LastLoad string `json:"last_load"`
			Issued   string `json:"issued"`
		} `json:"segments"`
	}
	decodeBody(t, v.admin(t, "GET", "/api/admin/segments", ""), &out)
	if len(out.Segments) != 1 {
		t.Fatalf("got %+v", out)
	}
	s := out.Segments[0]
	if s.Tag != "orders" || s.Step != 1000 || s.Segments[0] == nil || s.Segments[0].Start != "1" ||
		s.Segments[0].End != "1001" || s.Segments[0].Remaining != "1000" ||
		s.Segments[0].LoadedAt != "2023-11-14T22:13:20.000Z" || s.LastLoad != "2023-11-14T22:13:20.000Z" {
		t.Fatalf("got %+v / %+v", s, s.Segments[0])
	}
}

func TestAdminStoreFailure(t *testing.T) {
	t.Run("an unexpected error is a 500", func(t *testing.T) {
		v := newEnv(t)
		v.tags.SetFail(errors.New("syntax error near db:3306"))
		wantError(t, v.admin(t, "GET", "/api/admin/tags", ""), 500, "internal")
	})
	t.Run("an unreachable store is a 503 with Retry-After", func(t *testing.T) {
		v := newEnv(t)
		v.tags.SetFail(fmt.Errorf("%w: dial db:3306: connection refused", segment.ErrStoreUnavailable))
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/api/admin/tags", ""},
			{"GET", "/api/admin/tags/orders", ""},
			{"POST", "/api/admin/tags", `{"tag":"new"}`},
			{"PATCH", "/api/admin/tags/orders", `{"step":5}`},
		} {
			rec := v.admin(t, r.method, r.path, r.body)
			wantError(t, rec, 503, "unavailable")
			if strings.Contains(rec.Body.String(), "3306") {
				t.Errorf("%s %s leaks the cause: %s", r.method, r.path, rec.Body)
			}
		}
	})
}

func TestAdminBadBodies(t *testing.T) {
	huge := `{"tag":"x","description":"` + strings.Repeat("a", 70<<10) + `"}`
	tests := []struct {
		name   string
		method string
		target string
		body   string
		status int
	}{
		{"not JSON", "POST", "/api/admin/tags", `tag=orders`, 400},
		{"empty", "POST", "/api/admin/tags", ``, 400},
		{"truncated", "POST", "/api/admin/tags", `{"tag":"x"`, 400},
		{"array", "POST", "/api/admin/tags", `["x"]`, 400},
		{"string", "POST", "/api/admin/tags", `"x"`, 400},
		{"null", "POST", "/api/admin/tags", `null`, 400},
		{"unknown field", "POST", "/api/admin/tags", `{"tag":"x","biz_tag":"y"}`, 400},
		{"tag wrong type", "POST", "/api/admin/tags", `{"tag":5}`, 400},
		{"step as string", "POST", "/api/admin/tags", `{"tag":"x","step":"abc"}`, 400},
		{"step fraction", "POST", "/api/admin/tags", `{"tag":"x","step":1.5}`, 400},
		{"max_id fraction", "POST", "/api/admin/tags", `{"tag":"x","max_id":1.5}`, 400},
		{"max_id exponent", "POST", "/api/admin/tags", `{"tag":"x","max_id":1e3}`, 400},
		{"max_id beyond int64", "POST", "/api/admin/tags", `{"tag":"x","max_id":"9223372036854775808"}`, 400},
		{"max_id bool", "POST", "/api/admin/tags", `{"tag":"x","max_id":true}`, 400},
		{"max_id null", "POST", "/api/admin/tags", `{"tag":"x","max_id":null}`, 400},
		{"description number", "POST", "/api/admin/tags", `{"tag":"x","description":5}`, 400},
		{"trailing data", "POST", "/api/admin/tags", `{"tag":"x"} {"tag":"y"}`, 400},
		{"trailing garbage", "POST", "/api/admin/tags", `{"tag":"x"}xyz`, 400},
		{"description too long", "POST", "/api/admin/tags", `{"tag":"x","description":"` + strings.Repeat("é", 257) + `"}`, 400},
		{"patch description too long", "PATCH", "/api/admin/tags/orders", `{"description":"` + strings.Repeat("a", 257) + `"}`, 400},
		{"huge", "POST", "/api/admin/tags", huge, 413},
		{"patch not JSON", "PATCH", "/api/admin/tags/orders", `step=5`, 400},
		{"patch unknown field", "PATCH", "/api/admin/tags/orders", `{"tag":"y"}`, 400},
		{"patch wrong type", "PATCH", "/api/admin/tags/orders", `{"description":["a"]}`, 400},
		{"patch description null", "PATCH", "/api/admin/tags/orders", `{"description":null}`, 400},
		{"patch huge", "PATCH", "/api/admin/tags/orders", huge, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			rec := v.admin(t, tt.method, tt.target, tt.body)
			wantError(t, rec, tt.status, "invalid_request")
		})
	}
}

// A body larger than the limit without Content-Length (chunked) is caught
// while reading.
func TestAdminHugeChunkedBody(t *testing.T) {
	v := newEnv(t)
	body := `{"tag":"x","description":"` + strings.Repeat("a", 70<<10) + `"}`
	rec := v.do(t, http.MethodPost, "/api/admin/tags", strings.NewReader(body), withToken(testToken), func(r *http.Request) {
		r.ContentLength = -1
	})
	wantError(t, rec, 413, "invalid_request")
}

// TestAdminBodyMessages: a refused body is answered with a message that
// names the member at fault.
func TestAdminBodyMessages(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		body    string
		message string
	}{
		{"duplicate key", "POST", `{"tag":"a","tag":"b"}`, `field "tag" is given more than once`},
		{"duplicate key, later", "POST", `{"tag":"a","step":5,"step":6}`, `field "step" is given more than once`},
		{"duplicate key in patch", "PATCH", `{"max_id":5000,"max_id":1}`, `field "max_id" is given more than once`},
		{"key in another case", "POST", `{"tag":"a","Tag":"b"}`, `unknown field "Tag"`},
		{"key only in another case", "POST", `{"TAG":"a"}`, `unknown field "TAG"`},
		{"unknown field", "POST", `{"tag":"a","biz_tag":"y"}`, `unknown field "biz_tag"`},
		{"unknown field in patch", "PATCH", `{"tag":"y"}`, `unknown field "tag"`},
		{"long unknown field", "POST", `{"` + strings.Repeat("k", 1000) + `":1}`, `unknown field "` + strings.Repeat("k", 64) + `…"`},
		{"step null", "POST", `{"tag":"a","step":null}`, "step must not be null"},
		{"step string", "POST", `{"tag":"a","step":"x"}`, "step must be a number"},
		{"step bool", "PATCH", `{"step":true}`, "step must be a number"},
		{"step object", "POST", `{"tag":"a","step":{}}`, "step must be a number"},
		{"step fraction", "POST", `{"tag":"a","step":1.5}`, "step must be a whole number"},
		{"step exponent", "POST", `{"tag":"a","step":1e3}`, "step must be a whole number"},
		{"step signed string", "POST", `{"tag":"a","step":"+5"}`, "step must be a number"},
		{"max_id null", "PATCH", `{"max_id":null}`, "max_id must not be null"},
		{"max_id beyond int64", "POST", `{"tag":"a","max_id":"9223372036854775808"}`, "max_id must be a whole number from -9223372036854775808 to 9223372036854775807"},
		{"max_id array", "POST", `{"tag":"a","max_id":[1]}`, "max_id must be a number"},
		{"tag null", "POST", `{"tag":null}`, "tag must not be null"},
		{"tag number", "POST", `{"tag":5}`, "tag must be a string"},
		{"description null", "POST", `{"tag":"a","description":null}`, "description must not be null"},
		{"description number", "PATCH", `{"description":5}`, "description must be a string"},
		{"not an object", "POST", `["tag"]`, "the body must be a JSON object"},
		{"trailing data", "POST", `{"tag":"a"}{}`, "the body must hold one JSON object and nothing after it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			target := "/api/admin/tags"
			if tt.method == "PATCH" {
				target += "/orders"
			}
			e := wantError(t, v.admin(t, tt.method, target, tt.body), 400, "invalid_request")
			if e.Error.Message != tt.message {
				t.Errorf("message = %q, want %q", e.Error.Message, tt.message)
			}
			tags, err := v.tags.Tags(context.Background())
			if err != nil || len(tags) != 1 || tags[0].Name != "orders" || tags[0].Step != 1000 || tags[0].MaxID != 2001 {
				t.Errorf("tags changed: %+v (%v)", tags, err)
			}
		})
	}
}
