package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

type workerLease struct {
	WorkerID  int64  `json:"worker_id"`
	Lease     string `json:"lease"`
	FloorMs   int64  `json:"floor_ms"`
	ReserveMs int64  `json:"reserve_ms"`
	ExpiresMs int64  `json:"expires_ms"`
	Layout    struct {
		WorkerBits int `json:"worker_bits"`
	} `json:"layout"`
}

// leaseCall makes a call of the worker-lease routes and decodes a lease
// from its answer when it has one.
func leaseCall(t *testing.T, method, url, body string) (int, workerLease, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	var l workerLease
	dec := json.NewDecoder(resp.Body)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err == nil {
		b.Write(raw)
		_ = json.Unmarshal(raw, &l)
	}
	return resp.StatusCode, l, b.String()
}

// TestWorkerLeases: the fleet's worker ids leased to in-process generators
// over HTTP: two holders get two ids, neither the instance's own; a
// renewal moves the expiry and records the reserve; a release frees the id
// and records the last timestamp used, which the next holder of the id
// gets as its floor; an id renewed under a lease not its own is lease_lost.
func TestWorkerLeases(t *testing.T) {
	cfg := testConfig(t)
	cfg.WorkerID = -1
	srv := serving(t, cfg)
	base := "http://" + srv.Addr() + "/api/snowflake/leases"
	own := srv.gen.WorkerID()
	now := time.Now().UnixMilli()
	acquire := func(holder string, reserve int64) workerLease {
		t.Helper()
		code, l, body := leaseCall(t, http.MethodPost, base, fmt.Sprintf(`{"holder":%q,"ttl_ms":30000,"reserve_ms":%d}`, holder, reserve))
		if code != http.StatusCreated || l.Lease == "" || l.Layout.WorkerBits != 10 {
			t.Fatalf("acquire for %s = %d %s", holder, code, body)
		}
		return l
	}
	a, b := acquire("svc-a", now+25_000), acquire("svc-b", now+25_000)
	if a.WorkerID == b.WorkerID || a.WorkerID == own || b.WorkerID == own {
		t.Fatalf("worker ids %d and %d, the instance's %d: want three apart", a.WorkerID, b.WorkerID, own)
	}
	if a.ReserveMs != now+25_000 || a.ExpiresMs < now+25_000 {
		t.Errorf("a lease of 30 s: reserve %d, expires %d; want the reserve recorded, and the expiry about 30 s on", a.ReserveMs, a.ExpiresMs)
	}
	code, r, body := leaseCall(t, http.MethodPut, fmt.Sprintf("%s/%d", base, a.WorkerID),
		fmt.Sprintf(`{"lease":%q,"ttl_ms":60000,"reserve_ms":%d}`, a.Lease, now+55_000))
	if code != http.StatusOK || r.ReserveMs != now+55_000 || r.ExpiresMs < a.ExpiresMs+20_000 || r.Lease != a.Lease {
		t.Fatalf("renew = %d %s", code, body)
	}
	if code, _, body := leaseCall(t, http.MethodDelete, fmt.Sprintf("%s/%d", base, a.WorkerID),
		fmt.Sprintf(`{"lease":%q,"last_ms":%d}`, a.Lease, now+1000)); code != http.StatusOK {
		t.Fatalf("release = %d %s", code, body)
	}
	code, _, body = leaseCall(t, http.MethodPut, fmt.Sprintf("%s/%d", base, a.WorkerID),
		fmt.Sprintf(`{"lease":%q,"ttl_ms":30000,"reserve_ms":%d}`, b.Lease, now+25_000))
	if code != http.StatusConflict || !strings.Contains(body, `"lease_lost"`) {
		t.Fatalf("renew of a's id with b's lease = %d %s; want 409 lease_lost", code, body)
	}
	// svc-a again: its released id back, with the last timestamp as floor.
	again := acquire("svc-a", now+25_000)
	if again.WorkerID != a.WorkerID || again.FloorMs < now+1000 {
		t.Errorf("svc-a again: worker id %d floor %d; want %d, floor at least %d", again.WorkerID, again.FloorMs, a.WorkerID, now+1000)
	}
	for _, bad := range []string{`{"holder":"x","ttl_ms":100,"reserve_ms":1}`, `{"ttl_ms":30000,"reserve_ms":1}`, `{"holder":"x","ttl_ms":30000}`} {
		if code, _, body := leaseCall(t, http.MethodPost, base, bad); code != http.StatusBadRequest {
			t.Errorf("acquire %s = %d %s; want 400", bad, code, body)
		}
	}
}
