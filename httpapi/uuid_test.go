package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/uuidv7"
)

func withUUIDs(cfg *envConfig) { cfg.UUIDs = uuidv7.New(uuidv7.Options{}) }

func TestUUIDRoutes(t *testing.T) {
	v := newEnv(t, withUUIDs)
	var last string
	for range 5 {
		rec := v.do(t, http.MethodGet, "/api/uuid/get", nil)
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Fatalf("uuid get = %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		u, err := uuidv7.Parse(rec.Body.String())
		if err != nil || u.String() <= last {
			t.Fatalf("uuid %q (%v) not a v7 after %q", rec.Body, err, last)
		}
		last = u.String()
	}

	rec := v.do(t, http.MethodGet, "/api/uuid/batch?count=500", nil)
	var batch struct{ UUIDs []string }
	if err := json.Unmarshal(rec.Body.Bytes(), &batch); err != nil || rec.Code != 200 || len(batch.UUIDs) != 500 {
		t.Fatalf("uuid batch = %d %v %.200s", rec.Code, err, rec.Body)
	}
	if !slices.IsSorted(batch.UUIDs) || batch.UUIDs[0] <= last || len(slices.Compact(slices.Clone(batch.UUIDs))) != 500 {
		t.Fatal("batch UUIDs not strictly increasing after the single ones")
	}

	before := time.Now().Add(-time.Second)
	rec = v.do(t, http.MethodGet, "/api/uuid/decode/"+strings.ToUpper(last), nil)
	var d struct {
		UUID        string
		Version     int
		TimestampMs int64 `json:"timestamp_ms"`
		Time        string
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil || rec.Code != 200 || d.UUID != last || d.Version != 7 ||
		d.TimestampMs < before.UnixMilli() || d.Time == "" {
		t.Fatalf("decode = %d %s", rec.Code, rec.Body)
	}
	for _, bad := range []string{"nope", "0190a6e0-5c5b-4abc-8def-0123456789ab", "0190a6e0-5c5b-7abc-8def-0123456789a%20", ""} {
		if rec := v.do(t, http.MethodGet, "/api/uuid/decode/"+bad, nil); rec.Code != 400 || !strings.Contains(rec.Body.String(), "invalid_id") {
			t.Errorf("decode %q = %d %s, want 400 invalid_id", bad, rec.Code, rec.Body)
		}
	}
	if rec := newEnv(t).do(t, http.MethodGet, "/api/uuid/get", nil); rec.Code != 404 {
		t.Errorf("uuid get with UUIDs off = %d", rec.Code)
	}
	if rec := v.do(t, http.MethodHead, "/api/uuid/get", nil); rec.Code != 405 {
		t.Errorf("HEAD uuid get = %d, want 405", rec.Code)
	}
}
