package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// A holder that dies holding a worker lease, made by the runner itself: a
// lease of the step's key for ttl_ms with a reserve 80% of it ahead, never
// renewed nor released. The clients' workers then leased for the same
// holder name must not get its id while the lease runs, and, once it ran
// out, make their ids after its reserve.

type abandonedLease struct {
	workerID  int64
	reserveMs int64
}

// The fleet's default layout: 41 bits of milliseconds from Twitter's
// epoch, 10 of worker id, 12 of sequence.
const (
	defaultEpochMs = 1288834974657
	workerShift    = 12
	timeShift      = 22
)

func (e *env) abandon(st step) bool {
	ttl := st.MS
	reserve := time.Now().Add(time.Duration(ttl) * time.Millisecond * 4 / 5).UnixMilli()
	body := fmt.Sprintf(`{"holder":%q,"ttl_ms":%d,"reserve_ms":%d}`, *st.Key, ttl, reserve)
	resp, err := http.Post("http://"+e.server(st).addr+"/api/snowflake/leases", "application/json", strings.NewReader(body))
	if err != nil {
		e.t.Errorf("abandon: %v", err)
		return false
	}
	defer resp.Body.Close()
	var l struct {
		WorkerID int64 `json:"worker_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || resp.StatusCode != http.StatusCreated {
		e.t.Errorf("abandon: %d %v", resp.StatusCode, err)
		return false
	}
	e.abandoned = abandonedLease{workerID: l.WorkerID, reserveMs: reserve}
	return true
}

// checkAbandoned checks worker ids against the lease abandoned.
func (e *env) checkAbandoned(what string, st step, vals []int64) bool {
	x := st.Expect
	for _, v := range vals {
		worker, ms := v>>workerShift&1023, v>>timeShift+defaultEpochMs
		if x.NotAbandoned && worker == e.abandoned.workerID {
			e.t.Errorf("%s: id %d made with worker id %d while the dead holder's lease of it ran", what, v, worker)
			return false
		}
		if x.AfterAbandoned && ms <= e.abandoned.reserveMs {
			e.t.Errorf("%s: id %d of %v, not after the dead holder's reserve %v", what, v, time.UnixMilli(ms), time.UnixMilli(e.abandoned.reserveMs))
			return false
		}
	}
	return true
}
