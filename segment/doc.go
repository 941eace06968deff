// Package segment hands out ids from ranges ("segments") taken from a store,
// after Meituan's Leaf segment mode.
//
// Each biz tag has a double buffer. Ids come from the current segment with
// one atomic add. Once more than 10% of it is used, one background load asks
// the store for the next range, so that when the current segment runs out the
// next is already there and the switch costs a mutex, not a database round
// trip. A caller that finds both halves empty waits for the load in flight,
// bounded by its context.
//
// The step of each load adapts so that a segment lasts about 15 minutes:
// a segment that lasted under 15 minutes doubles the next step (up to
// MaxStep), one that lasted over 30 minutes halves it, never below the step
// stored in the database.
//
// # Sources
//
// Next takes each id with one atomic add on the segment's counter, which
// every goroutine writes, so goroutines on several cores slow each other
// down. A Source, kept by one goroutine, takes blocks of the segment with
// NextRange and hands their ids out with no shared write, so ids per
// second grow with cores. Its ids increase; across goroutines they are
// unique but not ordered, where Next's increase across the whole
// instance. See Source.
//
// # Fence
//
// The allocator remembers, per tag, the highest max_id it has received. A
// load that returns a range starting below it means the database went back
// in time (a failover to a replica that missed the last writes): the range
// is not used. Instead the row is moved forward, in one statement, past
// that mark plus Options.FailoverJump, and the range above is served. The
// jump protects the ranges that other instances took in the lost window,
// which this one never saw. The tag refresh looks for the same thing in the
// rows it reads, so a regression is found within a refresh interval even
// when no load is due.
package segment
