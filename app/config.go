package app

import (
	"time"

	"github.com/leafid/leaf/snowflake"
)

// Config is the configuration of a server: what `leaf serve`'s flags and
// environment read (docs/cli.md tells each), already checked. Zero fields
// are not defaults here: the command line fills them.
type Config struct {
	// StoreConfig is where the ids live: one store, or a set of them.
	StoreConfig
	// Addr is the listen address, host:port or :port.
	Addr string
	// Migrate applies the pending migrations before serving.
	Migrate bool
	// Segment, Snowflake and Sequences turn each mode on.
	Segment, Snowflake, Sequences bool
	// WorkerID is a fixed snowflake worker id; -1 leases one from the
	// store.
	WorkerID int64
	// EpochMs is the snowflake epoch in Unix milliseconds, and Layout the
	// bit layout of its ids.
	EpochMs int64
	Layout  snowflake.Layout
	// Holder is the identity of this instance in the worker-lease table;
	// empty means the host name and the listen port.
	Holder string
	// AdminToken and StatusToken are the bearer tokens of /api/admin and
	// of /status; an empty one leaves the first unmounted, the second open.
	AdminToken, StatusToken string
	// IDToken is the bearer token of the id routes and the IdService's
	// and SequenceService's calls, sent with every forward to an owner;
	// empty leaves them open.
	IDToken string
	// TLSCert and TLSKey are the certificate and key files of HTTPS and
	// gRPC over TLS; empty serves plaintext. They are read again when
	// they change. With them, calls to other instances go over HTTPS too.
	TLSCert, TLSKey string
	// PeerCA is the CA file that verifies the other instances'
	// certificates; empty: the system's roots.
	PeerCA string
	// PeerMutualTLS makes instances present TLSCert to each other, and
	// take a call marked as forwarded for one only from a client
	// certificate PeerCA verifies.
	PeerMutualTLS bool
	// RefreshTags is how often the tag list is read again.
	RefreshTags time.Duration
	// FailoverJump is how far past the highest max_id it received an
	// instance moves a row found gone back in time.
	FailoverJump int64
	// RideThrough is how long a tag's next range lasts at least at the
	// rate its current one is used; 0 means segment.DefaultRideThrough,
	// negative none.
	RideThrough time.Duration
	// CappedShare is the most of a capped period's numbers one call may
	// take (service.Config.CappedShare); 0 means the default.
	CappedShare float64
	// WriteTimeout bounds the writing of one answer, from the end of its
	// request's headers (http.Server.WriteTimeout; gRPC's streams are
	// not bound by it); 0 means DefaultWriteTimeout. MaxConns is the most
	// connections served at once; 0 means DefaultMaxConns. A connection
	// past it waits to be accepted.
	WriteTimeout time.Duration
	MaxConns     int
	// IdleTimeout is how long a connection with no request in flight is
	// kept; 0 means DefaultIdleTimeout. MaxWatches is the most gRPC
	// health Watch streams held at once; 0 means
	// grpcapi.DefaultMaxWatches.
	IdleTimeout time.Duration
	MaxWatches  int
	// RangeMax is the most ids a range hands out
	// (service.Config.RangeMax); 0 means the default.
	RangeMax int
	// MetricsTags always have series of their own once used.
	MetricsTags []string
	// OpaqueKeys are the fleet's keys of opaque tags, the first for new
	// tags. Never logged.
	OpaqueKeys [][]byte
	// PeriodGrace is how long after its end a formatted tag's period keeps
	// its row.
	PeriodGrace time.Duration
	// AdvertiseAddr is where other instances reach this one; empty: the
	// listen address when it names a host, else the host name and port.
	AdvertiseAddr string
	// SequenceLease is the lease of a section's owner, and ForwardTimeout
	// the bound of a request forwarded to an owner.
	SequenceLease, ForwardTimeout time.Duration
	// SequenceKeysMax is the most sequence keys with a counter in memory
	// (sequence.Options.MaxKeys); 0 means the default.
	SequenceKeysMax int64
	// SnowflakeLease is the lease of a leased worker id; 0 means
	// snowflake.DefaultLeaseTTL.
	SnowflakeLease time.Duration
	// RequireDurable takes no range, sequence raise or worker lease from a
	// store whose settings say it can forget a commit it acknowledged.
	RequireDurable bool
	// Version is the build's version, shown on /status and in the logs.
	Version string
}
