package app

import (
	"sync"
	"time"

	"github.com/leafid/leaf/segment"
)

// headroomRates measures how fast each bounded tag's row moves, for the
// time its ids left last: between two readings of its highest id taken
// (each load of any instance moves the row, and this instance sees the
// row's position at its own loads, so the rate is the fleet's as far as
// this instance saw it). A reading is kept as the start of the window
// until it is headroomWindow old; the readings come from the scrapes and
// the status page.
type headroomRates struct {
	mu    sync.Mutex
	first map[string]headroomReading
}

type headroomReading struct {
	at    time.Time
	taken int64
}

// headroomWindow is how far back the rate is measured at most.
const headroomWindow = 10 * time.Minute

// fill sets each headroom's SecondsLeft from the rate since its first
// reading, and records the readings.
func (r *headroomRates) fill(now time.Time, hs []segment.Headroom) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == nil {
		r.first = map[string]headroomReading{}
	}
	seen := make(map[string]bool, len(hs))
	for i := range hs {
		h := &hs[i]
		seen[h.Tag] = true
		f, ok := r.first[h.Tag]
		switch {
		case !ok || h.Taken < f.taken || now.Sub(f.at) > headroomWindow:
			r.first[h.Tag] = headroomReading{at: now, taken: h.Taken}
		case h.Taken > f.taken && now.Sub(f.at) >= time.Second:
			rate := float64(h.Taken-f.taken) / now.Sub(f.at).Seconds()
			h.SecondsLeft = float64(max(h.Bound-h.Taken, 0)) / rate
		}
	}
	for tag := range r.first {
		if !seen[tag] {
			delete(r.first, tag)
		}
	}
}
