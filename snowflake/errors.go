package snowflake

import "errors"

// Errors of snowflake mode.
var (
	// ErrInvalidSettings: Settings that cannot work (see New).
	ErrInvalidSettings = errors.New("invalid snowflake settings")
	// ErrClockBackwards: the clock moved back by more than the tolerance.
	ErrClockBackwards = errors.New("clock moved backwards")
	// ErrLeaseLost: the worker-id lease could not be renewed in time, or
	// another holder has it; no id is issued until it is renewed.
	ErrLeaseLost = errors.New("worker lease lost")
	// ErrLeaseRegressed: the lease store answered with a lease older than
	// one it had already confirmed (a failover to a database that missed
	// the last writes). It comes wrapped with ErrLeaseLost.
	ErrLeaseRegressed = errors.New("worker lease went back in time")
	// ErrLeaseUnrenewed: the lease could not be renewed in time, most
	// likely because the store does not answer; no id is issued until a
	// renewal succeeds. It comes wrapped with ErrLeaseLost.
	ErrLeaseUnrenewed = errors.New("worker lease not renewed in time")
	// ErrNoWorkerID: every worker id is held by a live lease.
	ErrNoWorkerID = errors.New("no free worker id")
	// ErrInvalidID: an id that this layout cannot have produced (a
	// negative one, or one above 2^53-1 with a 53-bit layout).
	ErrInvalidID = errors.New("invalid snowflake id")
	// ErrClosed: the generator was closed.
	ErrClosed = errors.New("generator closed")
	// ErrExhausted: the range of the layout's time field from the epoch has
	// run out; no id can be issued with this epoch and layout any more.
	ErrExhausted = errors.New("timestamp range exhausted")
)
