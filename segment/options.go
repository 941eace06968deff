package segment

import "time"

// Defaults of Options.
const (
	DefaultLoadTimeout     = 3 * time.Second
	DefaultRefreshInterval = 60 * time.Second
	DefaultRetryMin        = 50 * time.Millisecond
	DefaultRetryMax        = 500 * time.Millisecond
	// DefaultFailoverJump is how far past the highest max_id it received
	// an allocator moves a row that went back in time: room for a billion
	// ids, what ten instances taking 100,000 ids a second each take in
	// sixteen minutes of replication lag. It costs nothing but numbers.
	DefaultFailoverJump = 1_000_000_000
	// DefaultRideThrough is how long a tag's next segment holds at least,
	// at the rate its current one is used: longer than a database without
	// a writable node takes to have one again (a Group Replication
	// election, 10 to 21 s after a primary's death; a Galera node's
	// eviction, about 6 s), so that ids are served from memory meanwhile,
	// not only once the step has grown to last 15 minutes.
	DefaultRideThrough = 30 * time.Second
)

// Options configures an Allocator. Zero fields take the defaults above.
type Options struct {
	// LoadTimeout bounds one call to the store.
	LoadTimeout time.Duration
	// RefreshInterval is how often the tag list is read back to drop tags
	// gone from the database. Negative disables the refresh.
	RefreshInterval time.Duration
	// RetryMin and RetryMax bound the back-off after a failed load: during
	// it no new load starts and callers with empty buffers fail at once.
	RetryMin, RetryMax time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// FailoverJump is how far past the highest max_id received a row that
	// went back in time is moved (see the package comment); 0 means
	// DefaultFailoverJump.
	FailoverJump int64
	// AboveReceived makes every load ask the store for a range above the
	// highest max_id this allocator received for the tag. With several
	// stores whose rows advance apart (see storeset), it keeps one tag's
	// ids in the order this allocator hands them out whichever store a
	// range comes from; the stores themselves find rows gone back in time,
	// so the tag refresh does not look for them.
	AboveReceived bool
	// RideThrough is how long the next segment holds at least, at the
	// rate the current one is used, at most MaxStep; 0 means
	// DefaultRideThrough, negative none (the step then grows by doubling
	// alone).
	RideThrough time.Duration
	// OnLoad, when set, is called after every load from the store.
	OnLoad func(tag string, took time.Duration, err error)
	// OnRegression, when set, is called each time a tag's row is found
	// behind the highest max_id this allocator received for it.
	OnRegression func(Regression)
}

func (o Options) withDefaults() Options {
	if o.LoadTimeout <= 0 {
		o.LoadTimeout = DefaultLoadTimeout
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = DefaultRefreshInterval
	}
	if o.RetryMin <= 0 {
		o.RetryMin = DefaultRetryMin
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(DefaultRetryMax, o.RetryMin)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FailoverJump <= 0 {
		o.FailoverJump = DefaultFailoverJump
	}
	if o.RideThrough == 0 {
		o.RideThrough = DefaultRideThrough
	}
	return o
}
