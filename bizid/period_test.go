package bizid

import "testing"

func TestSplitRowName(t *testing.T) {
	for _, tc := range []struct {
		name, tag, key string
		ok             bool
	}{
		{"inv@20261126", "inv", "20261126", true},
		{"inv@202611", "inv", "202611", true},
		{"inv@2026", "inv", "2026", true},
		{"user@profile@20261126", "user@profile", "20261126", true},
		{"inv@2026112", "", "", false},
		{"inv@2026-11", "", "", false},
		{"inv@20261126 ", "", "", false},
		{"@20261126", "", "", false},
		{"inv", "", "", false},
		{"inv@", "", "", false},
	} {
		tag, key, ok := SplitRowName(tc.name)
		if tag != tc.tag || key != tc.key || ok != tc.ok {
			t.Errorf("SplitRowName(%q) = %q, %q, %v; want %q, %q, %v", tc.name, tag, key, ok, tc.tag, tc.key, tc.ok)
		}
	}
}

func TestPeriodKey(t *testing.T) {
	daily := Settings{Tag: "inv", Format: "I-{date:20060102}-{seq}", Reset: Day}
	for _, tc := range []struct {
		set  Settings
		key  string
		want bool
	}{
		{daily, "20261126", true},
		{daily, "202611", false},
		{Settings{Format: "I-{date:200601}-{seq}", Reset: Month}, "202611", true},
		{Settings{Format: "I-{date:2006}-{seq}", Reset: Year}, "2026", true},
		{Settings{Format: "I-{seq}", Reset: Never}, "2026", false},
		{Settings{Format: "I-{seq}"}, "2026", false},
		{Settings{OpaqueBits: Bits63}, "2026", false},
	} {
		if got := tc.set.PeriodKey(tc.key); got != tc.want {
			t.Errorf("%+v.PeriodKey(%q) = %v; want %v", tc.set, tc.key, got, tc.want)
		}
	}
}

// FuzzSplitRowName: a name split is the name RowName makes of its parts.
func FuzzSplitRowName(f *testing.F) {
	for _, s := range []string{"inv@20261126", "a@b@2026", "@2026", "inv@", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		tag, key, ok := SplitRowName(name)
		if ok && (RowName(tag, key) != name || tag == "" || key == "") {
			t.Fatalf("SplitRowName(%q) = %q, %q", name, tag, key)
		}
	})
}
