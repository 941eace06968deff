package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leafid/leaf/base62"
)

// TestBase62Form: ?format=base62 gives the same ids as fixed-width text
// that sorts as the numbers do.
func TestBase62Form(t *testing.T) {
	v := newEnv(t)
	var texts []string
	for _, target := range []string{"/api/segment/get/orders?format=base62", "/api/snowflake/get?format=base62"} {
		rec := v.do(t, http.MethodGet, target, nil)
		id, err := base62.Decode(rec.Body.String())
		if rec.Code != 200 || err != nil || id < 1 {
			t.Fatalf("%s = %d %q (%v)", target, rec.Code, rec.Body, err)
		}
		texts = append(texts, rec.Body.String())
	}
	rec := v.do(t, http.MethodGet, "/api/segment/batch/orders?count=50&format=base62", nil)
	var batch struct{ IDs []string }
	if err := json.Unmarshal(rec.Body.Bytes(), &batch); err != nil || rec.Code != 200 || len(batch.IDs) != 50 {
		t.Fatalf("batch = %d %v %.200s", rec.Code, err, rec.Body)
	}
	if !slices.IsSorted(batch.IDs) || batch.IDs[0] <= texts[0] {
		t.Fatalf("base62 batch not in order after %q: %v", texts[0], batch.IDs[:3])
	}
	rec = v.do(t, http.MethodGet, "/api/snowflake/batch?count=3&format=decimal", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"ids":["`) {
		t.Fatalf("format=decimal batch = %d %s", rec.Code, rec.Body)
	}
	for _, target := range []string{"/api/segment/get/orders?format=hex", "/api/snowflake/get?format=base62&format=base62",
		"/api/segment/batch/orders?count=2&format=Base62", "/api/segment/get/orders?format=%zz"} {
		if rec := v.do(t, http.MethodGet, target, nil); rec.Code != 400 {
			t.Errorf("%s = %d %s, want 400", target, rec.Code, rec.Body)
		}
	}
}

func TestConvert(t *testing.T) {
	v := newEnv(t)
	for _, id := range []int64{0, 1, 61, 62, 12345678901, 1 << 62, 1<<63 - 1} {
		dec := strconv.FormatInt(id, 10)
		for _, target := range []string{"/api/convert/decimal/" + dec, "/api/convert/base62/" + base62.Encode(id)} {
			rec := v.do(t, http.MethodGet, target, nil)
			var got struct{ Decimal, Base62 string }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 || got.Decimal != dec || got.Base62 != base62.Encode(id) {
				t.Fatalf("%s = %d %s", target, rec.Code, rec.Body)
			}
		}
	}
	for _, target := range []string{"/api/convert/decimal/-1", "/api/convert/decimal/9223372036854775808", "/api/convert/decimal/",
		"/api/convert/base62/zzzzzzzzzzz", "/api/convert/base62/abc", "/api/convert/decimal/1e3"} {
		if rec := v.do(t, http.MethodGet, target, nil); rec.Code != 400 || !strings.Contains(rec.Body.String(), "invalid_id") {
			t.Errorf("%s = %d %s, want 400 invalid_id", target, rec.Code, rec.Body)
		}
	}
	if rec := v.do(t, http.MethodGet, "/api/convert/hex/ff", nil); rec.Code != 404 {
		t.Errorf("unknown form = %d %s, want 404", rec.Code, rec.Body)
	}
}
