package snowflake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Defaults of Settings.
const (
	// DefaultEpochMs is Twitter's and Leaf's epoch, 2010-11-04T01:42:54.657Z.
	DefaultEpochMs   = 1288834974657
	DefaultLeaseTTL  = 30 * time.Second
	DefaultTolerance = 5 * time.Millisecond
)

// Settings configures a Generator. Zero fields take the documented defaults.
type Settings struct {
	// EpochMs is the epoch in Unix milliseconds; 0 means DefaultEpochMs.
	// It may not be negative nor in the future, and the range of the
	// layout's time field from it must not have run out.
	EpochMs int64
	// Layout is the ids' layout; the zero Layout means DefaultLayout().
	Layout Layout
	// WorkerID is the fixed worker id, 0..Layout.MaxWorkerID(), used when
	// Leases is nil and ignored otherwise.
	WorkerID int64
	// Leases, when set, is where the worker id is leased from.
	Leases LeaseStore
	// Holder identifies this process to Leases; required with Leases.
	Holder string
	// LeaseTTL is the lease's time to live; 0 means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Tolerance is the largest backward clock step that is waited out;
	// 0 means DefaultTolerance.
	Tolerance time.Duration
	// Now is the clock; nil means time.Now. Lease ages are measured with
	// Sub on its values, so time.Now's monotonic reading is used.
	Now func() time.Time
	// Sleep waits for d or until ctx is done; nil means a timer. It serves
	// the waits for the clock and the lease heartbeat's period.
	Sleep func(ctx context.Context, d time.Duration) error
	// SeqOffset gives the first sequence number of each new unit of time;
	// nil means a random number in 0..99, or below 2^SequenceBits/32 when
	// that is less, and 0 with the sequence above the worker id (see the
	// package comment). Its result is taken modulo 2^SequenceBits.
	SeqOffset func() int64
	// OnLease, when set, is called after each renewal and acquisition made
	// by the heartbeat, from the heartbeat's goroutine.
	OnLease func(LeaseEvent)
}

// withDefaults fills the zero fields of s with the documented defaults.
func (s Settings) withDefaults() Settings {
	if s.EpochMs == 0 {
		s.EpochMs = DefaultEpochMs
	}
	s.Layout = s.Layout.orDefault()
	if s.Tolerance == 0 {
		s.Tolerance = DefaultTolerance
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Sleep == nil {
		s.Sleep = sleep
	}
	if s.LeaseTTL == 0 {
		s.LeaseTTL = DefaultLeaseTTL
	}
	return s
}

// validate checks s, with its defaults, at now.
func (s Settings) validate(now time.Time) error {
	if err := s.Layout.Validate(); err != nil {
		return err
	}
	if err := CheckEpoch(s.EpochMs, now); err != nil {
		return err
	}
	switch {
	case s.Tolerance < 0:
		return fmt.Errorf("%w: clock tolerance %v is negative", ErrInvalidSettings, s.Tolerance)
	case s.Layout.Exhausted(s.EpochMs, now):
		return errExhausted(s.EpochMs, s.Layout)
	case s.Leases == nil:
		return checkWorkerID(s.WorkerID, s.Layout, "")
	case s.Holder == "":
		return fmt.Errorf("%w: a lease holder name is required with a lease store", ErrInvalidSettings)
	case s.LeaseTTL < 0:
		return fmt.Errorf("%w: lease TTL %v is negative", ErrInvalidSettings, s.LeaseTTL)
	}
	return nil
}

// randomOffset is the default Settings.SeqOffset of layout l: random below
// 100, or below 2^S/32 when that is less, and at least below 1; always 0
// with the sequence above the worker id, where the low bits that the
// offset spreads are the worker id's.
func randomOffset(l Layout) func() int64 {
	if l.Order == TimeSequenceWorker {
		return func() int64 { return 0 }
	}
	span := min(max((l.MaxSequence()+1)/32, 1), 100)
	return func() int64 { return rand.Int64N(span) }
}
