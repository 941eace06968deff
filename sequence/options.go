package sequence

import (
	"crypto/rand"
	"errors"
	"time"
)

// Defaults of Options.
const (
	// DefaultLease is how long a section's lease lasts without renewal:
	// also at most how long a section goes unserved after its owner died.
	DefaultLease = 10 * time.Second
	// DefaultMaxKeys is the most keys held in memory by default: about
	// 150 MB at 16 bytes a key, 650 MB at the longest keys
	// (docs/sequences.md, "Memory").
	DefaultMaxKeys = 2_000_000
)

// Event is something a round did or met, for logs.
type Event struct {
	// Kind is "taken", "released", "lost", "error" (a round failed),
	// "recovered" (a round succeeded after one failed), "handback" (the
	// unissued numbers of an ordered tag could not be handed back: the
	// store failed) or "skipped" (skipped.go).
	Kind    string
	Space   string
	Section int
	Err     error
	// Of "skipped": Count numbers of the row Row of the ordered tag Space,
	// from First on, never issued, for Cause (SkipLeaseLost, ...).
	Row          string
	First, Count int64
	Cause        string
}

// Options configure a Sequencer. Zero fields take the defaults.
type Options struct {
	// Store keeps the spaces, members and leases. Required.
	Store Store
	// Ordered and Tags serve ordered tags; with either nil no tag is
	// served as ordered (Ordered answers false).
	Ordered OrderedStore
	Tags    TagRows
	// Bound is the largest id an ordered tag may issue, math.MaxInt64 for
	// none (nil: no tag has one): NextTag issues none past it.
	Bound func(tag string) int64
	// Addr is the address other instances reach this one at (host:port).
	// Required: requests for sections owned here are forwarded to it.
	Addr string
	// ID names this member; empty means a random token, which is what a
	// process should use (a restarted process is a new member).
	ID string
	// Lease is the length of a section's lease; DefaultLease when 0.
	Lease time.Duration
	// Margin is how long before its lease runs out, by the local clock, an
	// owner stops serving a section; Lease/5 when 0.
	Margin time.Duration
	// Interval is the time between rounds; Lease/4 when 0. A negative one
	// starts no rounds: the caller runs Round itself (tests).
	Interval time.Duration
	// Now is the local clock; time.Now when nil.
	Now func() time.Time
	// MaxKeys is the most keys with a counter in memory; DefaultMaxKeys
	// when 0. Past it, a section that takes a new key forgets its keys
	// (section.forgetKeysLocked): each then goes on above the highest
	// number its section issued, so none repeats, at the price of a gap.
	MaxKeys int64
	// OnEvent, when set, is told of sections taken, released and lost, of
	// rounds that failed, and of the first round that succeeded after.
	OnEvent func(Event)
}

func (o *Options) fill() error {
	if o.Store == nil {
		return errors.New("sequence: no store")
	}
	if o.Addr == "" {
		return errors.New("sequence: no advertised address")
	}
	if o.ID == "" {
		o.ID = rand.Text()
	}
	if endsInSpace(o.ID) {
		// Its rows would be those of the id without the spaces.
		return errors.New("sequence: a member id may not end in a space")
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Margin <= 0 {
		o.Margin = o.Lease / 5
	}
	if o.Margin >= o.Lease {
		return errors.New("sequence: the margin is not shorter than the lease")
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.Interval == 0 {
		o.Interval = o.Lease / 4
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.OnEvent == nil {
		o.OnEvent = func(Event) {}
	}
	return nil
}
