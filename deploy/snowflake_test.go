package deploy

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/snowflake"
)

// TestEpochEndingAgrees: the LeafSnowflakeEpochEnding alert fires as near
// the end of the snowflake range as the start-up warning and the status
// page warn, snowflake.EndingSoon; the rule writes it out in seconds.
func TestEpochEndingAgrees(t *testing.T) {
	var rules ruleFile
	decodeYAML(t, rulesFile, &rules, true)
	const left = "leaf_snowflake_epoch_end_timestamp_seconds - time() <"
	found := false
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "LeafSnowflakeEpochEnding" {
				continue
			}
			found = true
			product, ok := strings.CutPrefix(strings.TrimSpace(r.Expr), left)
			if !ok {
				t.Fatalf("LeafSnowflakeEpochEnding: expr %q, want %s followed by a product of whole numbers", r.Expr, left)
			}
			seconds := int64(1)
			for _, f := range strings.Split(product, "*") {
				n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
				if err != nil {
					t.Fatalf("LeafSnowflakeEpochEnding: expr %q: %q is not a whole number", r.Expr, strings.TrimSpace(f))
				}
				seconds *= n
			}
			if want := int64(snowflake.EndingSoon / time.Second); seconds != want {
				t.Errorf("LeafSnowflakeEpochEnding fires %d s before the end, want snowflake.EndingSoon, %d s", seconds, want)
			}
		}
	}
	if !found {
		t.Fatal("no LeafSnowflakeEpochEnding alert")
	}
}
