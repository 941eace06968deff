package sequence

import (
	"context"
	"time"
)

// Abandon stops the Sequencer as a process killed with -9 would: no more
// rounds, nothing released, the member row left to run out.
func (q *Sequencer) Abandon() {
	q.closed.Store(true)
	q.stop()
	<-q.done
}

// Rendezvous is rendezvous for tests.
var Rendezvous = rendezvous

// AtLeaseEnd carries out the plans that are due, as the background
// rounds do when the first one is.
func (q *Sequencer) AtLeaseEnd(ctx context.Context) { q.atLeaseEnd(ctx) }

// NextPlan is the time of the earliest plan for a lease's end.
func (q *Sequencer) NextPlan() (time.Time, bool) { return q.nextPlan() }
