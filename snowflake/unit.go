package snowflake

// The time units a Layout's time field counts in, and the names they go
// by: one symbol each for the command line, the status JSON and
// Layout.String, and a word for sentences. A unit is added here, and only
// here: Layout.Validate, ParseUnit and the messages all read this list.

import (
	"strings"
	"time"
)

// A unit the time field may count in.
type unitInfo struct {
	unit    time.Duration
	symbol  string // ParseUnit's and UnitSymbol's
	word    string // UnitName's: singular, made plural by an "s"
	maxBits int    // the widest time field in this unit
}

// units are the time units, finest first.
var units = []unitInfo{
	{time.Millisecond, "ms", "millisecond", MaxTimeBitsMs},
	// Sonyflake's unit. Its word is a noun phrase rather than a symbol
	// so that the sentences that use it stay sentences: "39 bits of
	// 10-millisecond units", "the next 10-millisecond unit".
	{10 * time.Millisecond, "10ms", "10-millisecond unit", MaxTimeBits10ms},
	{time.Second, "s", "second", MaxTimeBitsS},
}

// lookupUnit finds unit among units.
func lookupUnit(unit time.Duration) (unitInfo, bool) {
	for _, u := range units {
		if u.unit == unit {
			return u, true
		}
	}
	return unitInfo{}, false
}

// ParseUnit reads a time unit by its symbol: "ms" is time.Millisecond,
// "10ms" 10*time.Millisecond and "s" time.Second; ok is false for any
// other text.
func ParseUnit(symbol string) (unit time.Duration, ok bool) {
	for _, u := range units {
		if u.symbol == symbol {
			return u.unit, true
		}
	}
	return 0, false
}

// UnitSymbol is the symbol ParseUnit reads unit by, "ms", "10ms" or "s";
// any other duration is written as time.Duration writes it.
func UnitSymbol(unit time.Duration) string {
	if u, ok := lookupUnit(unit); ok {
		return u.symbol
	}
	return unit.String()
}

// UnitName is unit in words, in the singular, "millisecond",
// "10-millisecond unit" or "second": adding an "s" makes the plural. Any
// other unit, the zero Layout's among them, is DefaultLayout's
// millisecond.
func UnitName(unit time.Duration) string {
	if u, ok := lookupUnit(unit); ok {
		return u.word
	}
	return "millisecond"
}

// UnitChoices lists the symbols of the units with their names, for a
// message that says which units there are: "ms (milliseconds), 10ms
// (10-millisecond units) or s (seconds)".
func UnitChoices() string {
	parts := make([]string, len(units))
	for i, u := range units {
		parts[i] = u.symbol + " (" + u.word + "s)"
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// maxTimeBits is the widest time field in unit, or 0 for a unit that is
// not one of units.
func maxTimeBits(unit time.Duration) int {
	u, _ := lookupUnit(unit)
	return u.maxBits
}
