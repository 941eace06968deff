package sequence

// Abandon stops the Sequencer as a process killed with -9 would: no more
// rounds, nothing released, the member row left to run out.
func (q *Sequencer) Abandon() {
	q.closed.Store(true)
	q.stop()
	<-q.done
}

// Rendezvous is rendezvous for tests.
var Rendezvous = rendezvous
