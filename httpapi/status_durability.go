package httpapi

import (
	"strings"
	"time"
)

// Durability on the status page and in /status.json: what the settings of
// each store (each node of a cluster) say of a commit the database
// acknowledged, read by the instance every minute.

// DurabilityLine is what the settings of one store, or of one node of a
// store's cluster, say.
type DurabilityLine struct {
	// Store is the store's name with several stores, "" for the one store.
	Store string
	// Node is the node's host:port, "" for SQLite.
	Node string
	// Known is false when the settings could not be read; Durable is then
	// meaningless and Why says why.
	Known   bool
	Durable bool
	// Why says what the settings are and what they risk; for a node that
	// can forget, the setting to change.
	Why string
	// Checked is when the settings were read.
	Checked time.Time
}

// durabilityJSON is one line of /status.json's "durability".
type durabilityJSON struct {
	Store string `json:"store"`
	Node  string `json:"node,omitempty"`
	// Durable is null when the settings could not be read.
	Durable *bool  `json:"durable"`
	Why     string `json:"why"`
	Checked string `json:"checked,omitempty"`
}

// durabilityJSON is the "durability" member: one line per store or node;
// nil, left out, when the instance reads no store's settings.
func (st statusState) durabilityJSON() []durabilityJSON {
	if len(st.durability) == 0 {
		return nil
	}
	out := make([]durabilityJSON, 0, len(st.durability))
	for _, l := range st.durability {
		j := durabilityJSON{Store: l.Store, Node: l.Node, Why: l.Why, Checked: formatTime(l.Checked, timeLayout)}
		if l.Known {
			j.Durable = &l.Durable
		}
		out = append(out, j)
	}
	return out
}

// durabilityPage fills the page's Durability section, and adds to its
// alerts the stores that can forget a commit.
func (st statusState) durabilityPage(v *pageView) {
	var forget []string
	for _, l := range st.durability {
		f := field{Label: durabilityLabel(l), Note: l.Why}
		switch {
		case !l.Known:
			f.Value = "not known"
		case l.Durable:
			f.Value = "durable"
		default:
			f.Value, f.Warn = "can forget commits", true
			forget = append(forget, f.Label)
		}
		if !l.Checked.IsZero() {
			f.Note += " (read " + ago(st.now, l.Checked) + ")"
		}
		v.Durability = append(v.Durability, f)
	}
	if len(forget) > 0 {
		v.Alerts = append(v.Alerts, "The database can forget commits it acknowledged, and hand out again the ranges they took ("+
			strings.Join(forget, ", ")+"): see Durability below for the setting to change")
	}
}

// durabilityLabel names a line: the store, and the node of a cluster.
func durabilityLabel(l DurabilityLine) string {
	var parts []string
	if l.Store != "" {
		parts = append(parts, "store "+l.Store)
	}
	if l.Node != "" {
		parts = append(parts, "node "+l.Node)
	}
	if len(parts) == 0 {
		return "Store"
	}
	s := strings.Join(parts, ", ")
	return strings.ToUpper(s[:1]) + s[1:]
}
