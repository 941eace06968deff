package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/httpapi"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
)

// serveConfig is the configuration of `leaf serve`, as its flags read it.
type serveConfig struct {
	storeFlags
	addr         string
	migrate      bool
	segment      bool
	snowflake    bool
	workerID     int64
	epochMs      int64
	layout       snowflake.Layout // --snowflake-layout, --snowflake-time-unit and --snowflake-order
	adminToken   string
	statusToken  string
	idToken      string
	tlsCert      string
	tlsKey       string
	peerCA       string
	peerMTLS     bool
	logFormat    string
	logLevel     slog.Level
	holder       string
	refreshTags  time.Duration
	failoverJump int64
	rideThrough  time.Duration
	cappedShare  float64
	rangeMax     int
	writeTimeout time.Duration
	maxConns     int
	idleTimeout  time.Duration
	maxWatches   int
	metricsTags  tagsFlag
	opaqueKeys   opaqueKeysFlag
	periodGrace  periodGraceFlag

	sequences      bool
	advertiseAddr  string
	sequenceLease  time.Duration
	sequenceKeys   int
	forwardTimeout time.Duration
	snowflakeLease time.Duration

	// requireDurable: take no range from a store that can forget a commit.
	requireDurable bool
}

// flags registers the flags of serve, which set c, each with its default.
func (c *serveConfig) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("leaf serve", flag.ContinueOnError)
	c.storeFlags.register(fs)
	c.addr = ":8080"
	fs.Var((*listenAddrFlag)(&c.addr), "addr", "listen `address`")
	fs.BoolVar(&c.migrate, "migrate", true, "apply pending migrations before serving")
	fs.BoolVar(&c.segment, "segment", true, "serve segment mode")
	fs.BoolVar(&c.snowflake, "snowflake", true, "serve snowflake mode")
	fs.Int64Var(&c.workerID, "snowflake-worker-id", -1, "fixed snowflake worker `id`, 0..2^W-1 for the W worker bits of --snowflake-layout (0..1023 by default); -1 leases one from the database")
	c.epochMs = snowflake.DefaultEpochMs
	fs.Var((*epochFlag)(&c.epochMs), "snowflake-epoch", "snowflake epoch in Unix `milliseconds`")
	c.layout = snowflake.DefaultLayout()
	fs.Var((*layoutFlag)(&c.layout), "snowflake-layout", "widths of the snowflake time, worker id and sequence fields as `T,W,S`; they sum to 63, or to 53 for ids a JavaScript number holds exactly")
	fs.Var((*timeUnitFlag)(&c.layout.Unit), "snowflake-time-unit", "`unit` of the snowflake time field: "+snowflake.UnitChoices())
	fs.Var((*orderFlag)(&c.layout.Order), "snowflake-order", "`order` of the snowflake fields from the top: "+snowflake.OrderChoices())
	fs.StringVar(&c.adminToken, "admin-token", "", "bearer `token` of /api/admin; empty disables the admin API")
	fs.StringVar(&c.idToken, "id-token", "", "bearer `token` of the id routes (every route under /api/ but /api/admin) and of gRPC's IdService and SequenceService, for a network where not every caller is trusted; every instance of the fleet needs the same; empty leaves them open")
	fs.StringVar(&c.statusToken, "status-token", "", "bearer `token` of /status and /status.json (read-only); empty leaves them open")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "certificate `file` (PEM, the chain after it) to serve HTTPS and gRPC over TLS on --addr instead of plaintext; with --tls-key")
	fs.StringVar(&c.tlsKey, "tls-key", "", "private key `file` (PEM) of --tls-cert")
	fs.StringVar(&c.peerCA, "peer-ca", "", "CA `file` (PEM) that verifies the other instances' certificates when they are called over HTTPS (with --tls-cert); empty: the system's roots")
	fs.BoolVar(&c.peerMTLS, "peer-mtls", false, "mutual TLS between instances: each presents its --tls-cert to the others, and a call marked as forwarded counts as one only from a certificate --peer-ca verifies")
	c.logFormat = "text"
	fs.Var((*logFormatFlag)(&c.logFormat), "log-format", "log `format`: text or json")
	c.logLevel = slog.LevelInfo
	fs.Var((*logLevelFlag)(&c.logLevel), "log-level", "log `level`: debug, info, warn or error")
	c.snowflakeLease = snowflake.DefaultLeaseTTL
	fs.Var((*positiveDurationFlag)(&c.snowflakeLease), "snowflake-lease", fmt.Sprintf("lease of a leased snowflake worker id (%v..%v), renewed every third of it: "+
		"snowflake ids stop a sixth of it before it ends when it cannot be renewed, so a longer one rides through a longer database election, and a worker id whose holder died is free after it", minSnowflakeLease, maxSnowflakeLease))
	fs.StringVar(&c.holder, "snowflake-holder", "", "worker-lease holder `identity`; empty means hostname:port, stable across restarts")
	c.refreshTags = segment.DefaultRefreshInterval
	fs.Var((*tagRefreshFlag)(&c.refreshTags), "tag-refresh", "how often the tag list is re-read to drop tags gone from the database and find rows gone back in time")
	c.limitFlags(fs)
	c.rideThrough = segment.DefaultRideThrough
	fs.Var((*rideThroughFlag)(&c.rideThrough), "ride-through", "how long a tag's next range lasts at least at the rate its current one is used, so that ids are served from memory while the database elects a writable node; 0 leaves the ranges to the 15-minute rule alone")
	c.failoverJump = segment.DefaultFailoverJump
	fs.Var((*failoverJumpFlag)(&c.failoverJump), "failover-jump", "how far past the highest max_id it received an instance moves a row found gone back in time (`ids`)")
	fs.BoolVar(&c.requireDurable, "require-durable", false, "take no range, sequence raise or worker lease from a store whose settings say it can forget a commit it acknowledged, "+
		"or whose settings have not been read (docs/high-availability.md, Durability)")
	fs.Var(&c.metricsTags, "metrics-tags", fmt.Sprintf("comma-separated biz `tags` that always have series of their own at /metrics once used, up to %d; "+
		"other tags have them only while they need attention or are among the %d busiest", metrics.MaxNamedTags, metrics.TopTags))
	fs.Var(&c.opaqueKeys, "opaque-key", fmt.Sprintf("`keys` of opaque tags, shared by the fleet, at least %d bytes each, separated by commas: the first for new tags, the others for tags made before a rotation; never logged", bizid.MinKeyLen))
	c.periodGrace = periodGraceFlag(bizid.DefaultGrace)
	fs.Var(&c.periodGrace, "period-grace", "how long after its end a formatted tag's period keeps its row; older periods are pruned and never issued again")
	fs.BoolVar(&c.sequences, "sequences", true, "serve per-key sequences (/api/sequence), and ordered, capped and ordered formatted tags; with --store they live in the home store of the set")
	fs.Var((*advertiseAddrFlag)(&c.advertiseAddr), "advertise-addr", "`host:port` where other instances reach this one, to forward sequence requests to the owner of a key's section; empty means the host name and the port of --addr")
	c.sequenceLease = sequence.DefaultLease
	fs.Var((*positiveDurationFlag)(&c.sequenceLease), "sequence-lease", "lease of a sequence section's owner: an owner that cannot renew stops serving before it ends, and a section whose owner died is served again after it")
	c.sequenceKeys = sequence.DefaultMaxKeys
	fs.Var(&countFlag{n: &c.sequenceKeys}, "sequence-keys-max", "the most sequence keys with a counter in memory (`N`); past it, a section that takes a new key forgets its keys' counters, and each goes on above the highest number the section issued: no number repeats, some are skipped")
	c.forwardTimeout = httpapi.DefaultForwardTimeout
	fs.Var((*positiveDurationFlag)(&c.forwardTimeout), "forward-timeout", "bound of a sequence request forwarded to the owner of the key's section")
	return fs
}

// limitFlags registers the flags of the limits an anonymous caller
// cannot pass (docs/security.md, Limits).
func (c *serveConfig) limitFlags(fs *flag.FlagSet) {
	c.cappedShare = service.DefaultCappedShare
	fs.Var((*shareFlag)(&c.cappedShare), "capped-share", "the most of a capped format's period ({seq:N!}) one call may take, above 0 and at most 1: a call for more is invalid_count, so that no caller takes a period whole")
	c.writeTimeout = app.DefaultWriteTimeout
	fs.Var((*positiveDurationFlag)(&c.writeTimeout), "write-timeout", "how long writing one answer may take, from the end of its request's headers, before the connection is closed (gRPC's streams are not bound by it): a client that does not read holds its answer no longer")
	c.maxConns = app.DefaultMaxConns
	fs.Var(&countFlag{n: &c.maxConns}, "max-conns", "the most connections served at once (`N`); one past it waits to be accepted")
	c.idleTimeout = app.DefaultIdleTimeout
	fs.Var((*positiveDurationFlag)(&c.idleTimeout), "idle-timeout", "how long a connection with no request in flight is kept open: a client's keep-alive, or one that sent nothing more than its first bytes")
	c.maxWatches = app.DefaultMaxWatches
	fs.Var(&countFlag{n: &c.maxWatches}, "max-watches", "the most gRPC health Watch streams held at once (`N`); one more is refused with ResourceExhausted")
	c.rangeMax = service.DefaultRangeMax
	fs.Var(&countFlag{n: &c.rangeMax, most: service.MaxRangeCount}, "range-max", fmt.Sprintf("the most ids one range hands out (`N` in 1..%d): a range asked larger is answered with this many, as a range is \"up to count\"", service.MaxRangeCount))
}

// advertiseAddrFlag is --advertise-addr: host:port with both parts, since
// another instance dials it.
type advertiseAddrFlag string

func (a advertiseAddrFlag) String() string { return string(a) }

func (a *advertiseAddrFlag) Set(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || port == "" {
		return valueError{s, errors.New("want host:port, an address other instances can dial, e.g. 10.0.0.7:8080")}
	}
	*a = advertiseAddrFlag(s)
	return nil
}

// positiveDurationFlag is a duration above zero.
type positiveDurationFlag time.Duration

func (d positiveDurationFlag) String() string { return time.Duration(d).String() }
func (d positiveDurationFlag) Get() any       { return time.Duration(d) }

func (d *positiveDurationFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v <= 0 {
		return valueError{v.String(), errors.New("want a positive duration")}
	}
	*d = positiveDurationFlag(v)
	return nil
}

// validate checks what no single flag can, once fs has read them all.
func (c *serveConfig) validate(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: serve takes no arguments, got %q", errUsage, fs.Args())
	}
	if err := c.validateSnowflake(time.Now()); err != nil {
		return err
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together: give both or neither", errUsage)
	}
	for _, tok := range []struct{ flag, value string }{{"--admin-token", c.adminToken}, {"--status-token", c.statusToken}, {"--id-token", c.idToken}} {
		if err := checkToken(tok.flag, tok.value); err != nil {
			return err
		}
	}
	if !c.segment && !c.snowflake {
		return fmt.Errorf("%w: --segment and --snowflake are both off: nothing to serve", errUsage)
	}
	return c.storeFlags.validate()
}

// listenAddrFlag is --addr: host:port, so that a bad address is a usage
// error before the store is opened and migrated rather than a failure
// after.
type listenAddrFlag string

func (a listenAddrFlag) String() string { return string(a) }

func (a *listenAddrFlag) Set(s string) error {
	if _, _, err := net.SplitHostPort(s); err != nil {
		return valueError{s, fmt.Errorf("want host:port or :port, e.g. :8080 (%v)", err)}
	}
	*a = listenAddrFlag(s)
	return nil
}

// tagRefreshFlag is --tag-refresh: a positive interval. segment.Options
// reads 0 as "the default" and a negative one as "never", and never would
// silently stop the search for rows gone back in time
// (docs/high-availability.md).
type tagRefreshFlag time.Duration

func (d tagRefreshFlag) String() string { return time.Duration(d).String() }
func (d tagRefreshFlag) Get() any       { return time.Duration(d) }

func (d *tagRefreshFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v <= 0 {
		return valueError{v.String(), fmt.Errorf("want a positive duration such as %v", segment.DefaultRefreshInterval)}
	}
	*d = tagRefreshFlag(v)
	return nil
}

// rideThroughFlag is --ride-through: a duration, 0 for none.
type rideThroughFlag time.Duration

func (d rideThroughFlag) String() string { return time.Duration(d).String() }
func (d rideThroughFlag) Get() any       { return time.Duration(d) }

func (d *rideThroughFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return valueError{v.String(), fmt.Errorf("want 0 or a positive duration such as %v", segment.DefaultRideThrough)}
	}
	*d = rideThroughFlag(v)
	return nil
}

// shareFlag is a share: above 0 and at most 1.
type shareFlag float64

func (f shareFlag) String() string { return strconv.FormatFloat(float64(f), 'g', -1, 64) }
func (f shareFlag) Get() any       { return float64(f) }

func (f *shareFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0 && v <= 1) {
		return valueError{s, errors.New("want a share above 0 and at most 1, such as 0.1")}
	}
	*f = shareFlag(v)
	return nil
}

// countFlag is a whole number from 1 to most (no bound above when most
// is 0), into n.
type countFlag struct {
	n    *int
	most int
}

func (f *countFlag) String() string {
	if f == nil || f.n == nil {
		return "0"
	}
	return strconv.Itoa(*f.n)
}

func (f *countFlag) Get() any { return *f.n }

func (f *countFlag) Set(s string) error {
	v, err := strconv.Atoi(s)
	switch {
	case (err != nil || v < 1) && f.most == 0:
		return valueError{s, errors.New("want a whole number above 0")}
	case err != nil || v < 1 || f.most > 0 && v > f.most:
		return valueError{s, fmt.Errorf("want a whole number from 1 to %d", f.most)}
	}
	*f.n = v
	return nil
}

// failoverJumpFlag is --failover-jump: at least one id.
type failoverJumpFlag int64

func (n failoverJumpFlag) String() string { return strconv.FormatInt(int64(n), 10) }
func (n failoverJumpFlag) Get() any       { return int64(n) }

func (n *failoverJumpFlag) Set(s string) error {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return err
	}
	if v < 1 {
		return valueError{strconv.FormatInt(v, 10), errors.New("want at least 1")}
	}
	*n = failoverJumpFlag(v)
	return nil
}

// tagsFlag is --metrics-tags, a list of tag names checked as it is set
// (metrics.ParseTags).
type tagsFlag struct {
	text string
	tags []string
}

func (f *tagsFlag) String() string {
	if f == nil {
		return ""
	}
	return f.text
}

func (f *tagsFlag) Set(s string) error {
	tags, err := metrics.ParseTags(s)
	if err != nil {
		return err
	}
	f.text, f.tags = s, tags
	return nil
}

// minTokenLen is the fewest bytes of a bearer token: a shorter one is
// guessed in reach of a caller with time.
const minTokenLen = 16

// checkToken refuses a token that could never match (whitespace around
// it, which callers' headers never carry: a newline from a file, say) or
// that is short enough to guess; the message never shows the token.
func checkToken(flag, token string) error {
	env := "LEAF_" + strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(flag, "--"), "-", "_"))
	switch {
	case token == "":
		return nil
	case strings.TrimSpace(token) != token:
		return fmt.Errorf("%w: %s (%s) begins or ends with whitespace (a newline from a file?): no caller's token could match it; remove it", errUsage, flag, env)
	case len(token) < minTokenLen:
		return fmt.Errorf("%w: %s (%s) has %d bytes, fewer than %d: give a longer one, e.g. openssl rand -hex 32", errUsage, flag, env, len(token), minTokenLen)
	}
	return nil
}
