package httpapi

import (
	"slices"
	"sync"
	"time"
)

// Rates are measured over the last rateWindow, from samples taken when the
// status is read, at most one per rateSpacing. Nothing runs between two
// reads, so an idle page costs nothing.
const (
	rateWindow  = time.Minute
	rateSpacing = time.Second
)

// rateMeter turns a counter into a rate from samples taken as it is read.
type rateMeter struct {
	mu      sync.Mutex  // protects samples
	samples []rateCount // oldest first, at least rateSpacing apart
}

type rateCount struct {
	at time.Time
	n  uint64
}

// rate records the counter's value n at now and returns its rate since the
// oldest sample kept: the newest one at least rateWindow old, or an older
// one when the page was not read within the window. ok is false until two
// samples are rateSpacing apart, or after the counter went back.
func (m *rateMeter) rate(now time.Time, n uint64) (perSec float64, over time.Duration, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	drop := 0
	for drop+1 < len(m.samples) && now.Sub(m.samples[drop+1].at) >= rateWindow {
		drop++
	}
	m.samples = slices.Delete(m.samples, 0, drop)
	if k := len(m.samples); k == 0 || now.Sub(m.samples[k-1].at) >= rateSpacing {
		m.samples = append(m.samples, rateCount{at: now, n: n})
	}
	base := m.samples[0]
	over = now.Sub(base.at)
	if over < rateSpacing || n < base.n {
		return 0, 0, false
	}
	return float64(n-base.n) / over.Seconds(), over, true
}
