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

// Reason says in a fixed sentence why the generator refuses ids, for an
// error of Next, NextN or Ready: no worker id, clock reading or store
// detail, so that a client or a load balancer may be told it as it is. It
// is "" for an error of none of the refusals below; ErrClosed is not one of
// them, since a program closes its generator only when it stops.
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrLeaseRegressed):
		return "the worker lease went back in time (a database failover): waiting until every holder the database forgot has stopped"
	case errors.Is(err, ErrLeaseUnrenewed):
		return "the worker lease could not be renewed in time"
	case errors.Is(err, ErrLeaseLost), errors.Is(err, ErrNoWorkerID):
		return "no worker lease is held: another process took it, or none is free"
	case errors.Is(err, ErrClockBackwards):
		return "the clock is behind the last id by more than the tolerance"
	case errors.Is(err, ErrExhausted):
		return "the snowflake layout's timestamp range from the epoch has run out"
	}
	return ""
}
