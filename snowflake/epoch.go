package snowflake

// The epoch and the end of the range of the time field counted from it:
// which epochs can work, when the range runs out, and how near its end is
// near enough to warn about.

import (
	"fmt"
	"time"
)

// EndingSoon is how near the end of the range (Generator.Exhausts) has to
// be for it to be reported as ending soon: the start-up warning, the
// status page and the LeafSnowflakeEpochEnding alert all use this year,
// the alert written out in its rule (deploy/prometheus/leaf-alerts.yml).
const EndingSoon = 365 * 24 * time.Hour

// CheckEpoch says why epochMs (Unix milliseconds) cannot be an epoch at
// now, in an error wrapping ErrInvalidSettings, or returns nil: an epoch
// is neither before 1970 nor in the future. Whether a layout's range from
// it has run out is Layout.Exhausted.
func CheckEpoch(epochMs int64, now time.Time) error {
	switch {
	case epochMs < 0:
		return fmt.Errorf("%w: epoch %d is negative, before 1970", ErrInvalidSettings, epochMs)
	case epochMs > now.UnixMilli():
		return fmt.Errorf("%w: epoch %d (%s) is in the future; an epoch must be at most now, %d (%s)",
			ErrInvalidSettings, epochMs, fmtMs(epochMs), now.UnixMilli(), now.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// Exhausted says whether the range of l's time field counted from epochMs
// has run out at now: whether now is at or past l.End(epochMs).
func (l Layout) Exhausted(epochMs int64, now time.Time) bool {
	return !now.Before(l.End(epochMs))
}

// Exhausts is the first instant (UTC) at which the range of the layout's
// time field has run out and no id can be issued.
func (g *Generator) Exhausts() time.Time {
	return g.layout.End(g.epochMs)
}

// errExhausted says that the range of l's time field from epochMs has run
// out.
func errExhausted(epochMs int64, l Layout) error {
	return fmt.Errorf("%w: the %d-bit range of %ss of epoch %s ran out at %s",
		ErrExhausted, l.TimeBits, UnitName(l.Unit), fmtMs(epochMs), l.End(epochMs).Format(time.RFC3339Nano))
}
