package bizid

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseTemplate(t *testing.T) {
	tests := []struct {
		name, src string
		wantErr   string // part of the message; "" for none
	}{
		{"order numbers", "ORD-{date:20060102}-{seq:6}", ""},
		{"seq only", "{seq}", ""},
		{"fixed width", "INV{date:200601}{seq:4!}", ""},
		{"braces", "{{x}}-{seq}", ""},
		{"no seq", "ORD-{date:20060102}", "no {seq}"},
		{"empty", "", "empty"},
		{"two seqs", "{seq}-{seq}", "twice"},
		{"unknown field", "{id}", "unknown field"},
		{"bad width", "{seq:0}", "width"},
		{"wide", "{seq:20}", "width"},
		{"unclosed", "A{seq", "never closed"},
		{"lone close", "A}{seq}", "lone"},
		{"date without layout", "{date}{seq}", "needs a layout"},
		{"control", "A\n{seq}", "control"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTemplate(tt.src)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidFormat) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrInvalidFormat saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	sh, _ := time.LoadLocation("Asia/Shanghai")
	tests := []struct {
		name, src string
		reset     Reset
		wantErr   string
	}{
		{"daily", "ORD-{date:20060102}-{seq:6}", Day, ""},
		{"daily with time", "{date:20060102150405}-{seq}", Day, ""},
		{"monthly shows day", "{date:2006-01-02}/{seq}", Month, ""},
		{"yearly", "Y{date:2006}-{seq}", Year, ""},
		{"never needs no date", "{seq}", Never, ""},
		{"date after seq", "{seq}-{date:20060102}", Day, ""},
		{"daily shows month", "ORD-{date:200601}-{seq}", Day, "same date"},
		{"monthly shows year", "{date:2006}-{seq}", Month, "same date"},
		{"two-digit year", "{date:060102}-{seq}", Day, "same date"},
		{"no date", "ORD-{seq}", Day, "same date"},
		{"variable width before", "{date:2006-1-2}-{seq}", Day, "changes width"},
		{"month names", "{date:January}{date:2006}-{seq}", Month, "changes width"},
		{"digit after", "{seq}{date:20060102}", Day, "begins with a digit"},
		{"digit literal after", "{seq}7", Never, "begins with a digit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := ParseTemplate(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			err = tmpl.Check(tt.reset, sh)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidFormat) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrInvalidFormat saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestText(t *testing.T) {
	sh, _ := time.LoadLocation("Asia/Shanghai")
	at := time.Date(2026, 11, 23, 9, 30, 0, 0, sh)
	tests := []struct {
		src  string
		n    int64
		want string
	}{
		{"ORD-{date:20060102}-{seq:6}", 42, "ORD-20261123-000042"},
		{"ORD-{date:20060102}-{seq:6}", 1234567, "ORD-20261123-1234567"}, // widens
		{"{{{seq}}}", 7, "{7}"},
		{"{seq:3!}", 999, "999"},
	}
	for _, tt := range tests {
		tmpl, err := ParseTemplate(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := tmpl.Text(at, tt.n); got != tt.want {
			t.Errorf("%s with %d = %q, want %q", tt.src, tt.n, got, tt.want)
		}
	}
	tmpl, _ := ParseTemplate("{seq:3!}")
	if got := tmpl.MaxSeq(); got != 999 {
		t.Errorf("MaxSeq = %d, want 999", got)
	}
}

func TestPeriods(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tz data:", err)
	}
	tests := []struct {
		name      string
		r         Reset
		at        time.Time
		key       string
		wantHours float64
	}{
		{"day", Day, time.Date(2026, 11, 23, 23, 59, 59, 0, ny), "20261123", 24},
		{"spring forward", Day, time.Date(2026, 3, 8, 12, 0, 0, 0, ny), "20260308", 23},
		{"fall back", Day, time.Date(2026, 11, 1, 1, 30, 0, 0, ny), "20261101", 25},
		{"february, leap year", Month, time.Date(2028, 2, 29, 23, 0, 0, 0, ny), "202802", 29 * 24},
		{"year", Year, time.Date(2026, 12, 31, 23, 59, 59, 0, ny), "2026", 365 * 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PeriodAt("orders", tt.r, tt.at)
			if p.Key != tt.key || p.Row != "orders@"+tt.key {
				t.Fatalf("period = %+v, want key %s", p, tt.key)
			}
			if h := p.End.Sub(p.Start).Hours(); h != tt.wantHours {
				t.Fatalf("period lasts %vh, want %vh", h, tt.wantHours)
			}
			if tt.at.Before(p.Start) || !tt.at.Before(p.End) {
				t.Fatalf("%v outside [%v, %v)", tt.at, p.Start, p.End)
			}
		})
	}
}
