package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/httpapi"
)

// TestStatusDurability: one line per store or node in the JSON, durable
// true, false or null (not read); the page shows each line and puts the
// stores that can forget under "Needs attention"; with nothing read the
// section is left out of both.
func TestStatusDurability(t *testing.T) {
	checked := time.Date(2026, 11, 22, 17, 20, 3, 0, time.UTC)
	lines := []httpapi.DurabilityLine{
		{Store: "eu", Node: "db1:3306", Known: true, Durable: true, Why: "Galera node, a cluster of 2: innodb_flush_log_at_trx_commit=1", Checked: checked},
		{Store: "eu", Node: "db2:3306", Known: true, Why: "Galera node, a cluster of 2: innodb_flush_log_at_trx_commit=2: a commit survives while one node of the cluster does; set innodb_flush_log_at_trx_commit=1", Checked: checked},
		{Store: "us", Node: "db3:3306", Why: "not read: connection refused"},
	}
	fx := newStatusFixture()
	v := newEnv(t, fx.config, func(c *envConfig) {
		c.Instance.Durability = func() []httpapi.DurabilityLine { return lines }
	})
	var out struct {
		Durability []struct {
			Store   string `json:"store"`
			Node    string `json:"node"`
			Durable *bool  `json:"durable"`
			Why     string `json:"why"`
			Checked string `json:"checked"`
		} `json:"durability"`
	}
	decodeBody(t, v.do(t, http.MethodGet, "/status.json", nil), &out)
	if len(out.Durability) != 3 {
		t.Fatalf("durability %+v, want 3 lines", out.Durability)
	}
	for i, want := range []*bool{new(true), new(false), nil} {
		got := out.Durability[i]
		if (got.Durable == nil) != (want == nil) || want != nil && *got.Durable != *want {
			t.Errorf("line %d: durable %v, want %v", i, got.Durable, want)
		}
		if got.Store != lines[i].Store || got.Node != lines[i].Node || got.Why != lines[i].Why {
			t.Errorf("line %d: %+v, want %+v", i, got, lines[i])
		}
	}
	if out.Durability[0].Checked != "2026-11-22T17:20:03.000Z" {
		t.Errorf("checked %q", out.Durability[0].Checked)
	}

	page := v.do(t, http.MethodGet, "/status", nil).Body.String()
	for _, want := range []string{
		`<section id="durability">`,
		"Store eu, node db1:3306", "durable",
		"Store eu, node db2:3306", "can forget commits", "set innodb_flush_log_at_trx_commit=1",
		"Store us, node db3:3306", "not known",
		"The database can forget commits it acknowledged, and hand out again the ranges they took (Store eu, node db2:3306)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}

	lines = nil
	var none map[string]any
	decodeBody(t, v.do(t, http.MethodGet, "/status.json", nil), &none)
	if _, ok := none["durability"]; ok {
		t.Errorf("nothing read: durability %v, want it left out", none["durability"])
	}
	if page := v.do(t, http.MethodGet, "/status", nil).Body.String(); strings.Contains(page, `id="durability"`) || strings.Contains(page, "can forget") {
		t.Error("nothing read: the page shows a Durability section")
	}
}
