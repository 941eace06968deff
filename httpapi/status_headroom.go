package httpapi

import (
	"fmt"
	"strconv"
	"time"

	"github.com/leafid/leaf/segment"
)

// Headroom on the status page and in /status.json: for each tag that
// declared a bound (its max), and each capped period this instance owns,
// how far it is from its end as this instance knows it. The time left at
// the fleet's rate is the alert LeafTagBoundSoon's: one instance sees its
// own share of the traffic only.

// headroomJSON is one line of /status.json's "headroom".
type headroomJSON struct {
	Tag string `json:"tag"`
	// Kind is "bound" (a declared max) or "capped_period".
	Kind  string  `json:"kind"`
	Bound string  `json:"bound"`
	Left  string  `json:"left"`
	Used  float64 `json:"used_ratio"`
	// SecondsLeft is how long the ids left last at the rate the row moved
	// lately; absent until it is seen to move.
	SecondsLeft float64 `json:"seconds_left,omitempty"`
}

// headroomLine is a bounded tag's headroom or a capped period's.
type headroomLine struct {
	segment.Headroom
	capped bool
}

func (l headroomLine) used() float64 {
	return float64(min(l.Taken, l.Bound)) / float64(l.Bound)
}

// headroomJSON is the "headroom" member, left out when there is none.
func (st statusState) headroomJSON() []headroomJSON {
	out := make([]headroomJSON, 0, len(st.headroom))
	for _, l := range st.headroom {
		kind := "bound"
		if l.capped {
			kind = "capped_period"
		}
		out = append(out, headroomJSON{Tag: l.Tag, Kind: kind, Bound: strconv.FormatInt(l.Bound, 10),
			Left: strconv.FormatInt(max(l.Bound-l.Taken, 0), 10), Used: l.used(), SecondsLeft: l.SecondsLeft})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// headroomPage fills the page's Headroom section, and adds to its alerts
// the tags at 90% of their bound or period.
func (st statusState) headroomPage(v *pageView) {
	for _, l := range st.headroom {
		what := "bound " + group(uint64(l.Bound))
		if l.capped {
			what = "period of " + group(uint64(l.Bound))
		}
		f := field{Label: l.Tag, Value: fmt.Sprintf("%.0f%% used", 100*l.used()),
			Note: fmt.Sprintf("%s left of its %s", group(uint64(max(l.Bound-l.Taken, 0))), what)}
		if l.SecondsLeft > 0 {
			f.Note += ", gone in " + humanDuration(time.Duration(l.SecondsLeft*float64(time.Second))) + " at the recent rate"
		}
		switch u := l.used(); {
		case u >= 0.9:
			f.Bad = true
			v.Alerts = append(v.Alerts, fmt.Sprintf("Tag %s has used %.0f%% of its %s", l.Tag, 100*u, what))
		case u >= 0.8:
			f.Warn = true
		}
		v.Headroom = append(v.Headroom, f)
	}
}
