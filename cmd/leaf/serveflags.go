package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/snowflake"
)

type serveConfig struct {
	storeFlags
	addr         string
	migrate      bool
	segment      bool
	snowflake    bool
	workerID     int64
	epochMs      int64
	layoutBits   string           // --snowflake-layout as given
	timeUnit     string           // --snowflake-time-unit as given
	layout       snowflake.Layout // the two above, set by validate
	adminToken   string
	statusToken  string
	logFormat    string
	logLevel     string
	holder       string
	refreshTags  time.Duration
	failoverJump int64
}

func (c *serveConfig) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("leaf serve", flag.ContinueOnError)
	c.storeFlags.register(fs)
	fs.StringVar(&c.addr, "addr", ":8080", "listen `address`")
	fs.BoolVar(&c.migrate, "migrate", true, "apply pending migrations before serving")
	fs.BoolVar(&c.segment, "segment", true, "serve segment mode")
	fs.BoolVar(&c.snowflake, "snowflake", true, "serve snowflake mode")
	fs.Int64Var(&c.workerID, "snowflake-worker-id", -1, "fixed snowflake worker `id`, 0..2^W-1 for the W worker bits of --snowflake-layout (0..1023 by default); -1 leases one from the database")
	fs.Int64Var(&c.epochMs, "snowflake-epoch", snowflake.DefaultEpochMs, "snowflake epoch in Unix `milliseconds`")
	fs.StringVar(&c.layoutBits, "snowflake-layout", defaultLayoutBits, "widths of the snowflake time, worker id and sequence fields as `T,W,S`; they sum to 63, or to 53 for ids a JavaScript number holds exactly")
	fs.StringVar(&c.timeUnit, "snowflake-time-unit", "ms", "`unit` of the snowflake time field: ms or s")
	fs.StringVar(&c.adminToken, "admin-token", "", "bearer `token` of /api/admin; empty disables the admin API")
	fs.StringVar(&c.statusToken, "status-token", "", "bearer `token` of /status and /status.json (read-only); empty leaves them open")
	fs.StringVar(&c.logFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&c.holder, "snowflake-holder", "", "worker-lease holder `identity`; empty means hostname:port, stable across restarts")
	fs.DurationVar(&c.refreshTags, "tag-refresh", segment.DefaultRefreshInterval, "how often the tag list is re-read to drop tags gone from the database and find rows gone back in time")
	fs.Int64Var(&c.failoverJump, "failover-jump", segment.DefaultFailoverJump, "how far past the highest max_id it received an instance moves a row found gone back in time (`ids`)")
	return fs
}

func (c *serveConfig) validate(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: serve takes no arguments, got %q", errUsage, fs.Args())
	}
	if err := c.validateSnowflake(time.Now()); err != nil {
		return err
	}
	switch {
	case !c.segment && !c.snowflake:
		return fmt.Errorf("%w: --segment and --snowflake are both off: nothing to serve", errUsage)
	case c.failoverJump < 1:
		return fmt.Errorf("%w: --failover-jump %d: want at least 1", errUsage, c.failoverJump)
	}
	return c.storeFlags.validate()
}

// validateSnowflake checks the snowflake layout, the worker id it allows
// and, with snowflake mode on, that the layout's range from the epoch has
// not run out at now: so that none of them fails a start halfway through,
// after the store was opened and migrated.
func (c *serveConfig) validateSnowflake(now time.Time) error {
	var err error
	if c.layout, err = parseLayout(c.layoutBits, c.timeUnit); err != nil {
		return err
	}
	// Named as parsed, not as given: the given text may hold spaces or
	// control characters from a variable.
	l := c.layout
	given := fmt.Sprintf("--snowflake-layout %d,%d,%d --snowflake-time-unit %s", l.TimeBits, l.WorkerBits, l.SequenceBits, c.timeUnit)
	if err := l.Validate(); err != nil {
		return fmt.Errorf("%w: %s: %w", errUsage, given, err)
	}
	if c.workerID != -1 && !l.ValidWorkerID(c.workerID) {
		return fmt.Errorf("%w: --snowflake-worker-id %d: want -1 or 0..%d (%d worker bits in %s)",
			errUsage, c.workerID, l.MaxWorkerID(), l.WorkerBits, given)
	}
	if end := l.End(c.epochMs); c.snowflake && l.Exhausted(c.epochMs, now) {
		return fmt.Errorf("%w: --snowflake-epoch %d with %s: the %d-bit time field ran out at %s; "+
			"a later epoch or a wider time field starts a new range, and changes the ids (README, \"Snowflake layouts\")",
			errUsage, c.epochMs, given, l.TimeBits, end.Format(time.RFC3339Nano))
	}
	return nil
}

// flagRules are checks of a flag's value that its type cannot make. They
// run on a value set by a variable or on the command line, before anything
// is opened, so that a bad one is a usage error and not a failure halfway
// through a start.
var flagRules = map[string]func(any) error{
	"snowflake-epoch":     checkEpoch,
	"snowflake-layout":    checkLayoutSyntax,
	"snowflake-time-unit": checkTimeUnit,
	"tag-refresh":         checkTagRefresh,
	"addr":                checkAddr,
}

// defaultLayoutBits is --snowflake-layout's default: Leaf's layout.
const defaultLayoutBits = "41,10,12"

// parseLayout reads --snowflake-layout (three widths, "41,10,12") and
// --snowflake-time-unit ("ms" or "s"). It checks only their syntax: the
// rules of a layout are snowflake.Layout.Validate's.
func parseLayout(bits, unit string) (snowflake.Layout, error) {
	if err := checkLayoutSyntax(bits); err != nil {
		return snowflake.Layout{}, fmt.Errorf("%w: --snowflake-layout %s: %v", errUsage, printable(bits), err)
	}
	if err := checkTimeUnit(unit); err != nil {
		return snowflake.Layout{}, fmt.Errorf("%w: --snowflake-time-unit %s: %v", errUsage, printable(unit), err)
	}
	var w [3]int
	for i, f := range strings.Split(bits, ",") {
		w[i], _ = strconv.Atoi(strings.TrimSpace(f))
	}
	u, _ := snowflake.ParseUnit(unit)
	return snowflake.Layout{Unit: u, TimeBits: w[0], WorkerBits: w[1], SequenceBits: w[2]}, nil
}

// checkLayoutSyntax wants three whole numbers separated by commas.
func checkLayoutSyntax(v any) error {
	s, _ := v.(string)
	fields := strings.Split(s, ",")
	if len(fields) != 3 {
		return fmt.Errorf("want the bits of time, worker id and sequence as T,W,S, e.g. %s", defaultLayoutBits)
	}
	for _, f := range fields {
		if _, err := strconv.Atoi(strings.TrimSpace(f)); err != nil {
			return fmt.Errorf("%s is not a number of bits; want T,W,S, e.g. %s", printable(strings.TrimSpace(f)), defaultLayoutBits)
		}
	}
	return nil
}

// checkTimeUnit wants ms or s.
func checkTimeUnit(v any) error {
	s, _ := v.(string)
	if _, ok := snowflake.ParseUnit(s); !ok {
		return errors.New("want ms (milliseconds) or s (seconds)")
	}
	return nil
}

// checkTagRefresh wants a positive interval: segment.Options reads 0 as
// "the default" and a negative one as "never", and never would silently
// stop the search for rows gone back in time (README, "High availability").
func checkTagRefresh(v any) error {
	if d, ok := v.(time.Duration); !ok || d <= 0 {
		return fmt.Errorf("want a positive duration such as %v", segment.DefaultRefreshInterval)
	}
	return nil
}

// checkAddr wants host:port, so that a bad address is a usage error before
// the store is opened and migrated rather than a failure after.
func checkAddr(v any) error {
	s, _ := v.(string)
	if _, _, err := net.SplitHostPort(s); err != nil {
		return fmt.Errorf("want host:port or :port, e.g. :8080 (%v)", err)
	}
	return nil
}

// checkEpoch accepts the epochs that snowflake.CheckEpoch does but 0,
// from 1 ms after the Unix epoch to now. Zero is refused rather than
// honoured: snowflake.Settings reads an EpochMs of 0 as "the default", so
// 0 used to become 1288834974657 without a word. Honouring it would need a
// way to say "unset" other than 0 in the snowflake settings; what is lost
// is small, as the 41 bits counted from 1970 run out in 2039.
func checkEpoch(v any) error {
	ms, ok := v.(int64)
	if !ok {
		return fmt.Errorf("not a number of milliseconds")
	}
	if ms == 0 {
		return fmt.Errorf("not accepted (0 used to mean the default; an epoch of 1970 would run out in 2039): give the epoch in Unix milliseconds, e.g. the default %d", snowflake.DefaultEpochMs)
	}
	return snowflake.CheckEpoch(ms, time.Now())
}
