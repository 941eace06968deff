package snowflake

// The time units a Layout's time field counts in, and the names they go
// by: one symbol each for the command line, the status JSON and
// Layout.String, and a word for sentences.

import "time"

// ParseUnit reads a time unit by its symbol: "ms" is time.Millisecond and
// "s" time.Second; ok is false for any other text.
func ParseUnit(symbol string) (unit time.Duration, ok bool) {
	switch symbol {
	case "ms":
		return time.Millisecond, true
	case "s":
		return time.Second, true
	}
	return 0, false
}

// UnitSymbol is the symbol ParseUnit reads unit by, "ms" or "s"; any other
// duration is written as time.Duration writes it.
func UnitSymbol(unit time.Duration) string {
	switch unit {
	case time.Millisecond:
		return "ms"
	case time.Second:
		return "s"
	}
	return unit.String()
}

// UnitName is unit in a word, "second" or "millisecond": any unit other
// than time.Second, the zero Layout's among them, is DefaultLayout's
// millisecond.
func UnitName(unit time.Duration) string {
	if unit == time.Second {
		return "second"
	}
	return "millisecond"
}
