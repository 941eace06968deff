// Package snowflake issues 64-bit ids that grow with time. By default they
// have the layout of Meituan's Leaf (Twitter's snowflake):
//
//	+-------+----------------------------------+-----------+-------------+
//	| 1 bit | 41 bits                          | 10 bits   | 12 bits     |
//	| 0     | milliseconds since the epoch     | worker id | sequence    |
//	+-------+----------------------------------+-----------+-------------+
//	 bit 63   bits 62..22                        bits 21..12 bits 11..0
//
//	id = ms<<22 | worker<<12 | sequence
//
// The sign bit is always 0, so every id is a positive int64. The 41 bits of
// milliseconds last 2^41 ms (about 69.7 years) from the epoch; Exhausts tells
// when. One worker issues at most 4096 ids per millisecond (4.096 million per
// second); a caller who finds the millisecond used up waits, asleep, for the
// next one.
//
// # Layouts
//
// Settings.Layout changes the unit of the time field (milliseconds, units
// of 10 milliseconds as sonyflake counts, or seconds) and the widths of the
// three fields:
//
//	id = t<<(W+S) | worker<<S | sequence      T + W + S = 63, or 53
//
// with T bits of time, W of worker id and S of sequence. The time field
// lasts 2^T units from the epoch; a worker issues at most 2^S ids per unit;
// leased worker ids come from a pool of 2^W. When T+W+S is 53, the ten bits
// below the sign bit are 0 too, and every id is an integer that a
// JavaScript number holds exactly.
//
// Layout.Order puts the sequence above the worker id instead, as sonyflake
// does (39 bits of 10 ms, 8 of sequence, 16 of machine id):
//
//	id = t<<(W+S) | sequence<<W | worker      Order TimeSequenceWorker
//
// Ids still grow with time, and one worker's ids still increase; within a
// unit they are 2^W apart rather than consecutive, and id % 2^W is the
// worker id. Decode reads an id by the generator's layout, order included:
// an id of one layout read by another is meaningless, so changing the
// layout of a running system is a migration, like changing the epoch.
//
// Below, "unit" is the layout's time unit; with Leaf's layout, a
// millisecond.
//
// # Sequence offset
//
// Each new unit's sequence starts at Settings.SeqOffset() instead of 0; by
// default a random number in 0..99, as in Leaf. Under low traffic most units
// issue a single id; were its sequence always 0, every such id would be a
// multiple of 4096 and sharding by `id % n` (n a power of two up to 4096)
// would send them all to shard 0. The offset spreads them, at the price of up
// to 99 of the 4096 numbers of a busy millisecond. With a narrower sequence
// field the default offset is below 2^S/32, so that it costs at most a 32nd
// of a unit's numbers (with 4 bits of sequence it is always 0). With the
// sequence above the worker id the low bits are the worker id whatever the
// sequence, so the default offset is 0, as in sonyflake.
//
// # Clock
//
// The generator keeps the unit of the last id it issued and never issues
// below it, nor in it once its sequence numbers are used up, whatever the
// wall clock does. When the clock is found behind the start of that unit by
// at most Settings.Tolerance, the caller waits it out; by more, Next fails
// with an error wrapping ErrClockBackwards and the generator recovers by
// itself once the clock has caught up. With a unit coarser than a
// millisecond, a clock that steps back within the unit of the last id goes
// unnoticed and harms nothing: the sequence goes on.
//
// # Worker leases
//
// The worker id is either fixed (Settings.WorkerID) or leased from a
// LeaseStore, from a pool of 2^W. A leaseholder issues only units strictly
// above the one that holds the lease's LastTimestamp. It renews the lease
// at once and then from a heartbeat goroutine every third of its TTL (every
// half second at most after a failed one); each renewal records, as the
// lease's LastTimestamp, the renewal's start plus LeaseTTL less a safety
// margin (a sixth of the TTL), and the holder issues no unit that starts
// beyond what it recorded. It also stops issuing once LeaseTTL less the
// margin has passed on the local monotonic clock since the start of its
// last successful renewal: so it stops before the store can give the id to
// someone else, and the next holder starts above every id it issued,
// whatever the two clocks say. It resumes after a successful renewal; when
// the store says the lease is someone else's, it stops at once and
// acquires a worker id again. Close stops the heartbeat and releases the
// lease, recording the last timestamp issued.
//
// LastTimestamp is in Unix milliseconds whatever the unit: a unit is
// recorded as its first millisecond, the time its ids decode to, and a
// LastTimestamp read back counts as the whole unit that holds it. So with
// seconds a holder records the start of its last id's second, and the next
// holder of the id starts in a later second, waiting for it if need be; the
// same goes for units of 10 ms, and for a timestamp recorded within a unit
// by a holder with a finer one.
//
// When a renewal finds the lease older than the store had confirmed
// (ErrLeaseRegressed: a failover to a database that missed the last
// writes), the store can no longer be trusted to know who holds which id:
// another holder may be issuing on an id the store shows free. So after
// acquiring again the generator issues nothing until LeaseTTL less the
// margin has passed since the regression was found, by which time every
// holder whose renewals the store lost has stopped by itself. A store made
// of several independent registries, each leasing in its own part of the
// worker-id space (Lease.Registry), puts only that registry in doubt: a
// lease acquired again from another one is used at once.
package snowflake
