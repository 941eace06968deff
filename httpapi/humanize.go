package httpapi

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Formatting for people.

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func withErr(err string) string {
	if err == "" {
		return ""
	}
	return ": " + err
}

func plural(n int, noun string) string { return count(uint64(max(n, 0)), noun) }

// count is n and the noun, in the plural unless n is 1.
func count(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return group(n) + " " + noun + "s"
}

// listOf names the first of n items, and how many more there are.
func listOf(first []string, n int) string {
	if len(first) >= n {
		return strings.Join(first, ", ")
	}
	return strings.Join(first, ", ") + fmt.Sprintf(" and %s more", group(uint64(n-len(first))))
}

// group writes n with thousands separated by commas.
func group(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	lead := len(s) % 3
	if lead > 0 {
		b.WriteString(s[:lead])
	}
	for i := lead; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// humanDuration is d to two units: "45s", "3m 05s", "2h 10m", "4d 3h",
// "54 years".
func humanDuration(d time.Duration) string {
	const day, year = 24 * time.Hour, 365*24*time.Hour + 6*time.Hour // a year of 365.25 days
	switch {
	case d < 0:
		return "-" + humanDuration(-d)
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int64(d/time.Minute), int64(d%time.Minute/time.Second))
	case d < day:
		return fmt.Sprintf("%dh %02dm", int64(d/time.Hour), int64(d%time.Hour/time.Minute))
	case d < 2*year:
		return fmt.Sprintf("%dd %dh", int64(d/day), int64(d%day/time.Hour))
	}
	return fmt.Sprintf("%d years", int64(d/year))
}

// humanTook is a load's duration: "850µs", "3.2ms", "1.25s".
func humanTook(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}

func humanRate(r float64) string {
	switch {
	case r >= 100:
		return group(uint64(r + 0.5))
	case r >= 10:
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}

// ago is how long before now t was, "never" for the zero time.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + humanDuration(-d)
	}
	return humanDuration(d) + " ago"
}

// until is how long after now t is, "—" for the zero time.
func until(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := t.Sub(now)
	if d < 0 {
		return "expired " + humanDuration(-d) + " ago"
	}
	return "in " + humanDuration(d)
}
