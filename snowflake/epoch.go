package snowflake

import (
	"fmt"
	"time"
)

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
