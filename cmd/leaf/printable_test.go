package main

import "testing"

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"orders", "orders"},
		{"订单-ü", "订单-ü"},
		{"a\x1b[31mred", `a\x1b[31mred`},
		{"bell\a", `bell\a`},
		{`say "hi"`, `say "hi"`},
		{`\u200d`, `\\u200d`},
		{"nul\x00", `nul\x00`},
		{"tab\tnl\ncr\r", `tab\tnl\ncr\r`},
		{`back\slash`, `back\\slash`},
		{"del\x7f", `del\x7f`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"bidi\u202egnp.exe", `bidi\u202egnp.exe`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"family 👨\u200d👩\u200d👧", "family 👨\u200d👩\u200d👧"},
	}
	for _, tt := range tests {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDisplayWidth(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"orders", 6}, {"订单", 4}, {"ｆｕｌｌ", 8}, {"e\u0301", 1}, {"한국", 4}, {"ü", 1}, {"🚀", 2},
	}
	for _, tt := range tests {
		if got := displayWidth(tt.in); got != tt.want {
			t.Errorf("displayWidth(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
