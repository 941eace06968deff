package snowflake

import (
	"errors"
	"testing"
	"time"
)

func TestUnits(t *testing.T) {
	tests := []struct {
		name         string
		unit         time.Duration
		symbol, word string
		parses       bool // ParseUnit(symbol) gives unit back
	}{
		{name: "milliseconds", unit: time.Millisecond, symbol: "ms", word: "millisecond", parses: true},
		{name: "10 milliseconds", unit: 10 * time.Millisecond, symbol: "10ms", word: "10-millisecond unit", parses: true},
		{name: "seconds", unit: time.Second, symbol: "s", word: "second", parses: true},
		{name: "100 milliseconds", unit: 100 * time.Millisecond, symbol: "100ms", word: "millisecond"},
		{name: "the zero Layout's", unit: 0, symbol: "0s", word: "millisecond"},
		{name: "minutes", unit: time.Minute, symbol: "1m0s", word: "millisecond"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UnitSymbol(tt.unit); got != tt.symbol {
				t.Errorf("UnitSymbol(%v) = %q, want %q", tt.unit, got, tt.symbol)
			}
			if got := UnitName(tt.unit); got != tt.word {
				t.Errorf("UnitName(%v) = %q, want %q", tt.unit, got, tt.word)
			}
			got, ok := ParseUnit(tt.symbol)
			if ok != tt.parses || (ok && got != tt.unit) {
				t.Errorf("ParseUnit(%q) = %v, %v; want %v, %v", tt.symbol, got, ok, tt.unit, tt.parses)
			}
		})
	}
	for _, s := range []string{"", "MS", "ms ", "sec", "us", "m", "10", "10 ms", "10MS", "1ms", "100ms", "10s"} {
		if u, ok := ParseUnit(s); ok {
			t.Errorf("ParseUnit(%q) = %v, want it refused", s, u)
		}
	}
}

func TestUnitChoices(t *testing.T) {
	want := "ms (milliseconds), 10ms (10-millisecond units) or s (seconds)"
	if got := UnitChoices(); got != want {
		t.Errorf("UnitChoices() = %q, want %q", got, want)
	}
	for _, u := range units {
		if got := maxTimeBits(u.unit); got != u.maxBits || got == 0 {
			t.Errorf("maxTimeBits(%v) = %d, want %d", u.unit, got, u.maxBits)
		}
	}
	if got := maxTimeBits(time.Minute); got != 0 {
		t.Errorf("maxTimeBits(1m) = %d, want 0", got)
	}
}

// TestMaxTimeBits: the widest time field of each unit lasts, from an
// epoch at now, to a year an RFC 3339 time can write; one bit more would
// run past the year 9999 even from the earliest epoch, 1970.
func TestMaxTimeBits(t *testing.T) {
	now := time.Now()
	for _, u := range units {
		widest := Layout{Unit: u.unit, TimeBits: u.maxBits, WorkerBits: 1, SequenceBits: IDBits - 1 - u.maxBits}
		if err := widest.Validate(); err != nil {
			t.Errorf("%v: %v", widest, err)
		}
		if end := widest.End(now.UnixMilli()); end.Year() > 9999 {
			t.Errorf("%v from now ends in %d", widest, end.Year())
		}
		wider := widest
		wider.TimeBits++
		wider.SequenceBits--
		if end := wider.End(1); end.Year() <= 9999 {
			t.Errorf("%v from 1970 ends in %d, within 9999: the limit could be a bit wider", wider, end.Year())
		}
		if err := wider.Validate(); !errors.Is(err, ErrInvalidSettings) {
			t.Errorf("Validate(%v) = %v, want %v", wider, err, ErrInvalidSettings)
		}
	}
}
