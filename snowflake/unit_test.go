package snowflake

import (
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
		{name: "seconds", unit: time.Second, symbol: "s", word: "second", parses: true},
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
	for _, s := range []string{"", "MS", "ms ", "sec", "us", "m"} {
		if u, ok := ParseUnit(s); ok {
			t.Errorf("ParseUnit(%q) = %v, want it refused", s, u)
		}
	}
}
