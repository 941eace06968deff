package service

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leafid/leaf/bizid"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/sequence"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/uuidv7"
)

// SegmentIDs issues segment-mode ids (segment.Allocator implements it).
type SegmentIDs interface {
	Next(ctx context.Context, tag string) (int64, error)
	// NextN returns n ids in increasing order.
	NextN(ctx context.Context, tag string, n int) ([]int64, error)
	// NextRange returns up to n consecutive ids, [start, start+count),
	// with 1 <= count <= n.
	NextRange(ctx context.Context, tag string, n int) (start int64, count int, err error)
	// Snapshot is the state of every tag's buffer, for
	// /api/admin/segments.
	Snapshot() []segment.BufferState
	// EachTag calls f with every tag's figures and returns the totals
	// over all tags, and State describes one tag's buffer: the status
	// page reads every tag with the first, and the tags it shows with the
	// second.
	EachTag(f func(segment.TagStats)) segment.Totals
	State(tag string) (segment.BufferState, bool)
	// Failed lists the tags whose first load failed, for the status
	// page.
	Failed() []segment.FailedTag
	// Loaded reports whether tag has a buffer: a tag the registry does not
	// keep is plain once loaded (Registry); NextLoaded is Next for such a
	// tag, and says loaded false for one without a buffer.
	Loaded(tag string) bool
	NextLoaded(ctx context.Context, tag string) (id int64, loaded bool, err error)
}

// SnowflakeIDs issues and decodes snowflake ids (snowflake.Generator
// implements it).
type SnowflakeIDs interface {
	Next(ctx context.Context) (int64, error)
	NextN(ctx context.Context, n int) ([]int64, error)
	Decode(id int64) (snowflake.ID, error)
	// Bounds is the lowest and highest id made from from to to.
	Bounds(from, to time.Time) (lo, hi int64, err error)
	// Stats is the generator's state, for the status page.
	Stats() snowflake.Stats
}

// UUIDs makes RFC 9562 version 7 UUIDs (uuidv7.Generator implements it).
type UUIDs interface {
	New() uuidv7.UUID
	Issued() uint64
}

// BizIDs serves formatted and opaque tags (bizid.Issuer implements it).
type BizIDs interface {
	Next(ctx context.Context, t *bizid.Tag) (bizid.ID, error)
	// AppendText issues one id of a formatted tag, appending its text.
	AppendText(ctx context.Context, t *bizid.Tag, b []byte) ([]byte, error)
	NextN(ctx context.Context, t *bizid.Tag, n int) ([]bizid.ID, error)
}

// Sequences issues per-key sequences (sequence.Sequencer implements it).
// A key whose section another instance owns is a *sequence.NotOwnerError.
type Sequences interface {
	// NextN takes n numbers of key and returns the first.
	NextN(ctx context.Context, space, key string, n int) (int64, error)
	// Current is the last number issued to key.
	Current(ctx context.Context, space, key string) (int64, error)
	// Stats are the figures of the status page.
	Stats() sequence.Stats
}

// SequenceRoutes tells the routing tables of the sequence spaces, so that
// clients send each key's requests to its owner (sequence.Sequencer
// implements it). Config.Sequences serves them when it implements it too.
type SequenceRoutes interface {
	// Routes is a space's routing table.
	Routes(ctx context.Context, space string) (sequence.Routes, error)
	// RoutesVersion is the version of a space's table, or "" for a space
	// not known yet.
	RoutesVersion(space string) string
}

// SpaceAdmin keeps the sequence spaces.
type SpaceAdmin interface {
	CreateSpace(ctx context.Context, s sequence.Space) (sequence.Space, error)
	Space(ctx context.Context, name string) (sequence.Space, error)
	Spaces(ctx context.Context) ([]sequence.Space, error)
}

// Config is what New needs: the parts of the domain that serve each kind
// of id. A nil part turns its kind off; the calls for it answer
// not_found.
type Config struct {
	// Segments serves segment mode.
	Segments SegmentIDs
	// Snowflake serves snowflake mode.
	Snowflake SnowflakeIDs
	// WorkerLeases lease the fleet's worker ids to in-process generators
	// (workers.go); nil where the instances do not lease their own.
	WorkerLeases snowflake.LeaseStore
	// UUIDs serves UUIDs. Decoding one needs no generator and is always
	// on.
	UUIDs UUIDs
	// Tags keeps the rows of leaf_alloc for the admin calls.
	Tags TagRows
	// Bounds keep the bounds tags declare (max); nil refuses them.
	// BoundSet is told of each bound an admin call sets.
	Bounds   TagBounds
	BoundSet func(tag string, bound int64)
	// Kinds is the tag registry: what kind each tag is; nil serves every
	// tag as a plain one.
	Kinds *Registry
	// Biz serves formatted and opaque tags; nil serves every tag as a
	// plain one. BizTags keeps their settings for the admin calls; with
	// either nil, or no compiler in Kinds, settings are refused.
	Biz     BizIDs
	BizTags SettingsRows
	// Sequences serves per-key sequences, and Spaces their spaces.
	Sequences Sequences
	Spaces    SpaceAdmin
	// Ordered serves the ordered tags; nil refuses them.
	Ordered OrderedTags
	// Peer asks the owner of a key's section or of a tag for the numbers
	// of a call that reaches this instance (httpapi.Peer); nil asks none.
	Peer Peer
	// Metrics receives the count of forwards; nil means a private
	// registry.
	Metrics prometheus.Registerer
	// CappedShare is the most of a capped period's numbers ({seq:N!}) one
	// call may take, from 0 to 1; 0 means DefaultCappedShare. A call that
	// asks more is invalid_count, and counted in leaf_limit_refused_total.
	CappedShare float64
	// RangeMax is the most ids a range hands out, from 1 to MaxRangeCount;
	// 0 means DefaultRangeMax. A range asked larger is answered with at
	// most this many, and counted in leaf_limit_clamped_total.
	RangeMax int
	// Logger receives what the service logs (forwards that failed); nil
	// discards.
	Logger *slog.Logger
}

// Service is what a request for ids means, once an edge has decoded it:
// which part of the domain serves a tag (plain, formatted or opaque,
// ordered and owned here or elsewhere), a key's sequence and its owner,
// the administration of tags and spaces with every rule of their
// settings, and the one table of errors. httpapi and grpcapi decode their
// requests, call it, and encode what it answers; neither decides what a
// tag is. It is safe for concurrent use.
type Service struct {
	cfg      Config
	fwd      *Forwarder
	tags     *TagAdmin
	refusals *AdminRefusals
	limited  *prometheus.CounterVec // leaf_limit_refused_total
	clamped  *prometheus.CounterVec // leaf_limit_clamped_total
}

// limitCounter is a counter of calls by limit, registered on reg (or the
// one already there).
func limitCounter(reg prometheus.Registerer, name, help string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"limit"})
	registerOrReuse(reg, &c)
	return c
}

// AdminRefused counts and logs a call of edge refused for its bearer
// token (AdminRefusals.Refused).
func (s *Service) AdminRefused(ctx context.Context, edge, from string, err error) {
	s.refusals.Refused(ctx, edge, from, err)
}

// New returns the Service of cfg.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	s := &Service{cfg: cfg}
	s.tags = &TagAdmin{Rows: cfg.Tags, Settings: cfg.BizTags, Kinds: cfg.Kinds, Log: cfg.Logger, Bounds: cfg.Bounds, BoundSet: cfg.BoundSet}
	s.refusals = NewAdminRefusals(cfg.Metrics, cfg.Logger)
	if s.cfg.CappedShare <= 0 || s.cfg.CappedShare > 1 {
		s.cfg.CappedShare = DefaultCappedShare
	}
	if s.cfg.RangeMax <= 0 || s.cfg.RangeMax > MaxRangeCount {
		s.cfg.RangeMax = DefaultRangeMax
	}
	s.limited = limitCounter(cfg.Metrics, "leaf_limit_refused_total",
		"Calls refused for passing a limit of the service, by limit: capped_share (more of a capped period's numbers than one call may take).")
	s.clamped = limitCounter(cfg.Metrics, "leaf_limit_clamped_total",
		"Calls answered with less than they asked for, by limit: range_count (a range asked larger than --range-max).")
	if cfg.Biz == nil {
		s.tags.Settings = nil
	}
	if cfg.Ordered != nil {
		s.tags.Ordered = cfg.Ordered
	}
	if cfg.Sequences != nil || cfg.Ordered != nil {
		s.fwd = NewForwarder(cfg.Peer, cfg.Metrics, cfg.Logger)
	}
	return s
}

// Parts are the parts of the domain that serve each kind of id, nil where
// it is off: what the status page and the metrics read their figures from.
type Parts struct {
	Segments  SegmentIDs
	Snowflake SnowflakeIDs
	UUIDs     UUIDs
	Sequences Sequences
}

// Parts returns the parts that serve each kind, as the status page and
// the metrics see them: the opaque tags' figures left out
// (monitoredSegments).
func (s *Service) Parts() Parts {
	p := Parts{Segments: s.cfg.Segments, Snowflake: s.cfg.Snowflake, UUIDs: s.cfg.UUIDs, Sequences: s.cfg.Sequences}
	if p.Segments != nil && s.cfg.Kinds != nil {
		p.Segments = monitoredSegments{SegmentIDs: p.Segments, kinds: s.cfg.Kinds}
	}
	return p
}

// Tags is the administration of tags.
func (s *Service) Tags() *TagAdmin { return s.tags }

// Forwards is how many requests were forwarded to an owner, of every
// result; 0 where none can be.
func (s *Service) Forwards() int64 {
	if s.fwd == nil {
		return 0
	}
	return s.fwd.Forwards()
}

// Mode is a kind of id an instance serves or not (leaf serve's
// --segment, --snowflake and --uuid).
type Mode string

// The modes.
const (
	ModeSegment   Mode = "segment"
	ModeSnowflake Mode = "snowflake"
	ModeUUID      Mode = "uuid"
	ModeSequences Mode = "sequences"
)

// Off is the error of a call for m where this instance does not serve it
// (ModeOff), nil where it does. An edge asks it before it reads the rest of
// a call, so that both answer a mode that is off first.
func (s *Service) Off(m Mode) error {
	on := false
	switch m {
	case ModeSegment:
		on = s.cfg.Segments != nil
	case ModeSnowflake:
		on = s.cfg.Snowflake != nil
	case ModeUUID:
		on = s.cfg.UUIDs != nil
	case ModeSequences:
		if s.cfg.Sequences == nil {
			return SequencesOff()
		}
		return nil
	}
	if on {
		return nil
	}
	return ModeOff(string(m))
}

// SegmentCall is the check of a call for a segment tag that both edges
// answer before they read its count: segment mode off, then a name that
// cannot be a tag's.
func (s *Service) SegmentCall(tag string) error {
	if err := s.Off(ModeSegment); err != nil {
		return err
	}
	return segment.ValidateTag(tag)
}

// ModeOff is the error of a call for a mode that is off ("segment",
// "snowflake", "uuid").
func ModeOff(mode string) error {
	return Errorf(NotFound, "%s mode is not enabled", mode)
}

// SequencesOff is the error of a call for sequences where they are off.
func SequencesOff() error { return Errorf(NotFound, "sequences are not enabled") }

// TagsOff is the error of an admin call for tags where their
// administration is off.
func TagsOff() error { return Errorf(NotFound, "tag administration is not enabled") }
