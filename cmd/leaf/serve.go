package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/leafid/leaf/app"
	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/metrics"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/service"
	"github.com/leafid/leaf/snowflake"
)

// serveCmd is `leaf serve` and its flags, each with its variable.
type serveCmd struct {
	storeFlags `embed:""`

	Addr           string        `var:"LEAF_ADDR" default:":8080" placeholder:"address" help:"listen address"`
	Migrate        bool          `var:"LEAF_MIGRATE" default:"true" help:"apply pending migrations before serving"`
	Segment        bool          `var:"LEAF_SEGMENT" default:"true" help:"serve segment mode"`
	Snowflake      bool          `var:"LEAF_SNOWFLAKE" default:"true" help:"serve snowflake mode"`
	WorkerID       int64         `name:"snowflake-worker-id" var:"LEAF_SNOWFLAKE_WORKER_ID" default:"-1" placeholder:"id" help:"fixed snowflake worker id, 0..2^W-1 for the W worker bits of --snowflake-layout (0..1023 by default); -1 leases one from the database"`
	Epoch          int64         `name:"snowflake-epoch" var:"LEAF_SNOWFLAKE_EPOCH" default:"${epoch}" placeholder:"milliseconds" help:"snowflake epoch in Unix milliseconds"`
	Layout         string        `name:"snowflake-layout" var:"LEAF_SNOWFLAKE_LAYOUT" default:"${layout}" placeholder:"T,W,S" help:"widths of the snowflake time, worker id and sequence fields; they sum to 63, or to 53 for ids a JavaScript number holds exactly"`
	TimeUnit       string        `name:"snowflake-time-unit" var:"LEAF_SNOWFLAKE_TIME_UNIT" default:"ms" placeholder:"unit" help:"unit of the snowflake time field: ${units}"`
	Order          string        `name:"snowflake-order" var:"LEAF_SNOWFLAKE_ORDER" default:"time,worker,sequence" placeholder:"order" help:"order of the snowflake fields from the top: ${orders}"`
	AdminToken     string        `var:"LEAF_ADMIN_TOKEN" placeholder:"token" help:"bearer token of /api/admin; empty disables the admin API"`
	IDToken        string        `name:"id-token" var:"LEAF_ID_TOKEN" placeholder:"token" help:"bearer token of the id routes (every route under /api/ but /api/admin) and of gRPC's IdService and SequenceService, for a network where not every caller is trusted; every instance of the fleet needs the same; empty leaves them open"`
	StatusToken    string        `var:"LEAF_STATUS_TOKEN" placeholder:"token" help:"bearer token of /status and /status.json (read-only); empty leaves them open"`
	TLSCert        string        `name:"tls-cert" var:"LEAF_TLS_CERT" placeholder:"file" help:"certificate (PEM, the chain after it) to serve HTTPS and gRPC over TLS on --addr instead of plaintext; with --tls-key"`
	TLSKey         string        `name:"tls-key" var:"LEAF_TLS_KEY" placeholder:"file" help:"private key (PEM) of --tls-cert"`
	PeerCA         string        `name:"peer-ca" var:"LEAF_PEER_CA" placeholder:"file" help:"CA (PEM) that verifies the other instances' certificates when they are called over HTTPS (with --tls-cert); empty: the system's roots"`
	PeerMTLS       bool          `name:"peer-mtls" var:"LEAF_PEER_MTLS" help:"mutual TLS between instances: each presents its --tls-cert to the others, and a call marked as forwarded counts as one only from a certificate --peer-ca verifies"`
	LogFormat      string        `var:"LEAF_LOG_FORMAT" default:"text" placeholder:"format" help:"log format: text or json"`
	LogLevel       string        `var:"LEAF_LOG_LEVEL" default:"info" placeholder:"level" help:"log level: debug, info, warn or error"`
	SnowflakeLease time.Duration `var:"LEAF_SNOWFLAKE_LEASE" default:"${snowflake_lease}" placeholder:"duration" help:"lease of a leased snowflake worker id (${snowflake_lease_bounds}), renewed every third of it: snowflake ids stop a sixth of it before it ends when it cannot be renewed, so a longer one rides through a longer database election, and a worker id whose holder died is free after it"`
	Holder         string        `name:"snowflake-holder" var:"LEAF_SNOWFLAKE_HOLDER" placeholder:"identity" help:"worker-lease holder identity; empty means hostname:port, stable across restarts"`
	TagRefresh     time.Duration `var:"LEAF_TAG_REFRESH" default:"${tag_refresh}" placeholder:"duration" help:"how often the tag list is re-read to drop tags gone from the database and find rows gone back in time"`
	limitFlags     `embed:""`
	RideThrough    time.Duration `var:"LEAF_RIDE_THROUGH" default:"${ride_through}" placeholder:"duration" help:"how long a tag's next range lasts at least at the rate its current one is used, so that ids are served from memory while the database elects a writable node; 0 leaves the ranges to the 15-minute rule alone"`
	FailoverJump   int64         `var:"LEAF_FAILOVER_JUMP" default:"${failover_jump}" placeholder:"ids" help:"how far past the highest max_id it received an instance moves a row found gone back in time"`
	RequireDurable bool          `var:"LEAF_REQUIRE_DURABLE" help:"take no range, sequence raise or worker lease from a store whose settings say it can forget a commit it acknowledged, or whose settings have not been read (docs/high-availability.md, Durability)"`
	MetricsTags    string        `var:"LEAF_METRICS_TAGS" placeholder:"tags" help:"comma-separated biz tags that always have series of their own at /metrics once used, up to ${max_named_tags}; other tags have them only while they need attention or are among the ${top_tags} busiest"`
	OpaqueKey      string        `var:"LEAF_OPAQUE_KEY" placeholder:"keys" help:"keys of opaque tags, shared by the fleet, at least ${min_key_len} bytes each, separated by commas: the first for new tags, the others for tags made before a rotation; never logged"`
	PeriodGrace    time.Duration `var:"LEAF_PERIOD_GRACE" default:"${period_grace}" placeholder:"duration" help:"how long after its end a formatted tag's period keeps its row; older periods are pruned and never issued again"`
	Sequences      bool          `var:"LEAF_SEQUENCES" default:"true" help:"serve per-key sequences (/api/sequence), and ordered, capped and ordered formatted tags; with --store they live in the home store of the set"`
	AdvertiseAddr  string        `var:"LEAF_ADVERTISE_ADDR" placeholder:"host:port" help:"where other instances reach this one, to forward sequence requests to the owner of a key's section; empty means the host name and the port of --addr"`
	SequenceLease  time.Duration `var:"LEAF_SEQUENCE_LEASE" default:"${sequence_lease}" placeholder:"duration" help:"lease of a sequence section's owner: an owner that cannot renew stops serving before it ends, and a section whose owner died is served again after it"`
	SequenceKeys   int           `name:"sequence-keys-max" var:"LEAF_SEQUENCE_KEYS_MAX" default:"${sequence_keys}" placeholder:"N" help:"the most sequence keys with a counter in memory; past it, a section that takes a new key forgets its keys' counters, and each goes on above the highest number the section issued: no number repeats, some are skipped"`
	ForwardTimeout time.Duration `var:"LEAF_FORWARD_TIMEOUT" default:"${forward_timeout}" placeholder:"duration" help:"bound of a sequence request forwarded to the owner of the key's section"`

	level slog.Level // of --log-level, once checked
}

// limitFlags are the limits an anonymous caller cannot pass
// (docs/security.md, Limits).
type limitFlags struct {
	CappedShare  float64       `var:"LEAF_CAPPED_SHARE" default:"${capped_share}" placeholder:"share" help:"the most of a capped format's period ({seq:N!}) one call may take, above 0 and at most 1: a call for more is invalid_count, so that no caller takes a period whole"`
	WriteTimeout time.Duration `var:"LEAF_WRITE_TIMEOUT" default:"${write_timeout}" placeholder:"duration" help:"how long writing one answer may take, from the end of its request's headers, before the connection is closed (gRPC's streams are not bound by it): a client that does not read holds its answer no longer"`
	MaxConns     int           `var:"LEAF_MAX_CONNS" default:"${max_conns}" placeholder:"N" help:"the most connections served at once; one past it waits to be accepted"`
	IdleTimeout  time.Duration `var:"LEAF_IDLE_TIMEOUT" default:"${idle_timeout}" placeholder:"duration" help:"how long a connection with no request in flight is kept open: a client's keep-alive, or one that sent nothing more than its first bytes"`
	MaxWatches   int           `var:"LEAF_MAX_WATCHES" default:"${max_watches}" placeholder:"N" help:"the most gRPC health Watch streams held at once; one more is refused with ResourceExhausted"`
	RangeMax     int           `var:"LEAF_RANGE_MAX" default:"${range_max}" placeholder:"N" help:"the most ids one range hands out (N in 1..${max_range}): a range asked larger is answered with this many, as a range is \"up to count\""`
}

func (c *serveCmd) Help() string {
	return "Runs the service; applies pending migrations first unless --migrate=false.\n" +
		"Every flag has an environment variable, shown with it; a flag wins over its variable."
}

// Run runs `leaf serve` until the context is done.
func (c *serveCmd) Run(r *runner) error {
	a, err := c.server(r.p, r.stderr)
	if err != nil {
		return err
	}
	app.KeepHeapFloor()
	if err := a.Open(r.ctx); err != nil {
		return errors.Join(err, a.Close())
	}
	err = a.Run(r.ctx)
	return errors.Join(err, a.Close())
}

// served is a server of `leaf serve` and the configuration its flags read.
type served struct {
	*app.Server
	cfg   app.Config
	flags *serveCmd
}

// server checks the flags and makes the server; nothing is started yet.
func (c *serveCmd) server(p *parser, stderr io.Writer) (*served, error) {
	cfg, err := c.config(p)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: c.level}
	log := slog.New(slog.NewTextHandler(stderr, opts))
	if c.LogFormat == "json" {
		log = slog.New(slog.NewJSONHandler(stderr, opts))
	}
	return &served{Server: app.New(cfg, log), cfg: cfg, flags: c}, nil
}

// config checks what the flags say, alone and together, and is the
// configuration of the server.
func (c *serveCmd) config(p *parser) (app.Config, error) {
	keys, err := opaqueKeys(p, c.OpaqueKey)
	if err != nil {
		return app.Config{}, err
	}
	tags, tagsErr := metrics.ParseTags(c.MetricsTags)
	if err := p.check(
		rule{"addr", validAddr(c.Addr, false), c.Addr, "want host:port or :port, e.g. :8080"},
		rule{"log-format", c.LogFormat == "text" || c.LogFormat == "json", strconv.Quote(c.LogFormat), "want text or json"},
		rule{"log-level", c.level.UnmarshalText([]byte(c.LogLevel)) == nil, strconv.Quote(c.LogLevel), "want debug, info, warn or error"},
		rule{"metrics-tags", tagsErr == nil, strconv.Quote(c.MetricsTags), fmt.Sprint(tagsErr)},
		rule{"advertise-addr", c.AdvertiseAddr == "" || validAddr(c.AdvertiseAddr, true), c.AdvertiseAddr, "want host:port, an address other instances can dial, e.g. 10.0.0.7:8080"},
		rule{"tag-refresh", c.TagRefresh > 0, c.TagRefresh, "want a positive duration such as " + segment.DefaultRefreshInterval.String()},
		rule{"ride-through", c.RideThrough >= 0, c.RideThrough, "want 0 or a positive duration such as " + segment.DefaultRideThrough.String()},
		rule{"failover-jump", c.FailoverJump >= 1, c.FailoverJump, "want at least 1"},
		rule{"period-grace", c.PeriodGrace >= bizid.MinGrace, c.PeriodGrace, fmt.Sprintf("want at least %v, well past the clock differences of a fleet", bizid.MinGrace)},
	); err != nil {
		return app.Config{}, err
	}
	if err := c.limits(p); err != nil {
		return app.Config{}, err
	}
	layout, err := c.layout(p)
	if err != nil {
		return app.Config{}, err
	}
	if err := c.together(p, layout); err != nil {
		return app.Config{}, err
	}
	stores, err := c.storeFlags.config(p)
	if err != nil {
		return app.Config{}, err
	}
	return app.Config{
		StoreConfig: stores, Addr: c.Addr,
		Migrate: c.Migrate, Segment: c.Segment, Snowflake: c.Snowflake, Sequences: c.Sequences,
		WorkerID: c.WorkerID, EpochMs: c.Epoch, Layout: layout, Holder: c.Holder,
		AdminToken: c.AdminToken, StatusToken: c.StatusToken, IDToken: c.IDToken, TLSCert: c.TLSCert, TLSKey: c.TLSKey, PeerCA: c.PeerCA, PeerMutualTLS: c.PeerMTLS,
		RefreshTags: c.TagRefresh, FailoverJump: c.FailoverJump, RideThrough: cmp.Or(c.RideThrough, -1), CappedShare: c.CappedShare, RangeMax: c.RangeMax,
		WriteTimeout: c.WriteTimeout, MaxConns: c.MaxConns, IdleTimeout: c.IdleTimeout, MaxWatches: c.MaxWatches,
		MetricsTags: tags, OpaqueKeys: keys, PeriodGrace: c.PeriodGrace,
		AdvertiseAddr: c.AdvertiseAddr, SequenceLease: c.SequenceLease, SequenceKeysMax: int64(c.SequenceKeys), SnowflakeLease: c.SnowflakeLease, ForwardTimeout: c.ForwardTimeout,
		RequireDurable: c.RequireDurable,
		Version:        version,
	}, nil
}

// limits checks the limits' values.
func (c *serveCmd) limits(p *parser) error {
	positive := "want a positive duration"
	return p.check(
		rule{"capped-share", c.CappedShare > 0 && c.CappedShare <= 1, c.CappedShare, "want a share above 0 and at most 1, such as 0.1"},
		rule{"write-timeout", c.WriteTimeout > 0, c.WriteTimeout, positive},
		rule{"idle-timeout", c.IdleTimeout > 0, c.IdleTimeout, positive},
		rule{"sequence-lease", c.SequenceLease > 0, c.SequenceLease, positive},
		rule{"forward-timeout", c.ForwardTimeout > 0, c.ForwardTimeout, positive},
		rule{"snowflake-lease", c.SnowflakeLease > 0, c.SnowflakeLease, positive},
		rule{"max-conns", c.MaxConns >= 1, c.MaxConns, "want a whole number above 0"},
		rule{"max-watches", c.MaxWatches >= 1, c.MaxWatches, "want a whole number above 0"},
		rule{"sequence-keys-max", c.SequenceKeys >= 1, c.SequenceKeys, "want a whole number above 0"},
		rule{"range-max", c.RangeMax >= 1 && c.RangeMax <= service.MaxRangeCount, c.RangeMax, fmt.Sprintf("want a whole number from 1 to %d", service.MaxRangeCount)},
	)
}

// together checks what no single flag can.
func (c *serveCmd) together(p *parser, layout snowflake.Layout) error {
	if err := c.validateSnowflake(p, layout, time.Now()); err != nil {
		return err
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together: give both or neither", errUsage)
	}
	for _, tok := range []struct{ flag, value string }{{"admin-token", c.AdminToken}, {"status-token", c.StatusToken}, {"id-token", c.IDToken}} {
		if err := checkToken(tok.flag, tok.value); err != nil {
			return err
		}
	}
	if !c.Segment && !c.Snowflake {
		return fmt.Errorf("%w: --segment and --snowflake are both off: nothing to serve", errUsage)
	}
	return nil
}

// validAddr reports whether s is host:port (or :port unless dialed).
func validAddr(s string, dialed bool) bool {
	host, port, err := net.SplitHostPort(s)
	return err == nil && (!dialed || host != "" && port != "")
}

// opaqueKeys reads the fleet's opaque keys, separated by commas; the
// refusal names a key by its place, never by its value.
func opaqueKeys(p *parser, s string) ([][]byte, error) {
	if s == "" {
		return nil, nil
	}
	var keys [][]byte
	for i, k := range strings.Split(s, ",") {
		if len(k) < bizid.MinKeyLen {
			return nil, p.refused(refusal{"opaque-key", "(secret)", fmt.Sprintf("key %d has %d bytes; an opaque key needs at least %d", i+1, len(k), bizid.MinKeyLen)})
		}
		keys = append(keys, []byte(k))
	}
	return keys, nil
}

// minTokenLen is the fewest bytes of a bearer token: a shorter one is
// guessed in reach of a caller with time.
const minTokenLen = 16

// checkToken refuses a token that could never match (whitespace around
// it, which callers' headers never carry: a newline from a file, say) or
// that is short enough to guess; the message never shows the token.
func checkToken(flag, token string) error {
	env := "LEAF_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
	switch {
	case token == "":
		return nil
	case strings.TrimSpace(token) != token:
		return fmt.Errorf("%w: --%s (%s) begins or ends with whitespace (a newline from a file?): no caller's token could match it; remove it", errUsage, flag, env)
	case len(token) < minTokenLen:
		return fmt.Errorf("%w: --%s (%s) has %d bytes, fewer than %d: give a longer one, e.g. openssl rand -hex 32", errUsage, flag, env, len(token), minTokenLen)
	}
	return nil
}
