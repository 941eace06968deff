package snowflake

// The order of an id's fields. Time is always on top, so that ids grow
// with time; below it the worker id and the sequence come in either order.

import "strconv"

// Order is the order of a Layout's fields from the top. The zero Order is
// Leaf's.
type Order int

// The orders of the fields.
const (
	// TimeWorkerSequence is Leaf's and Twitter's order: the sequence in
	// the low bits, so that one worker's ids within a unit of time are
	// consecutive integers.
	TimeWorkerSequence Order = iota
	// TimeSequenceWorker is sonyflake's order: the worker id in the low
	// bits, so that id % 2^W is the worker id, and one worker's ids
	// within a unit of time are 2^W apart.
	TimeSequenceWorker
)

// orderNames are the orders' names, as ParseOrder reads them.
var orderNames = [...]string{
	TimeWorkerSequence: "time,worker,sequence",
	TimeSequenceWorker: "time,sequence,worker",
}

// String is the order's name, "time,worker,sequence" or
// "time,sequence,worker"; an order that is neither is written as a number.
func (o Order) String() string {
	if o.valid() {
		return orderNames[o]
	}
	return "Order(" + strconv.Itoa(int(o)) + ")"
}

func (o Order) valid() bool { return o >= 0 && int(o) < len(orderNames) }

// ParseOrder reads an order by its name, "time,worker,sequence" or
// "time,sequence,worker"; ok is false for any other text.
func ParseOrder(name string) (o Order, ok bool) {
	for i, n := range orderNames {
		if n == name {
			return Order(i), true
		}
	}
	return 0, false
}

// OrderChoices lists the orders' names, for a message that says which
// orders there are.
func OrderChoices() string {
	return orderNames[TimeWorkerSequence] + " (Leaf's) or " + orderNames[TimeSequenceWorker] + " (sonyflake's)"
}
