// Package sequence issues per-key sequences after WeChat's seqsvr: for
// every key of a space, numbers that never repeat and strictly increase in
// the order they are issued, across every instance.
//
// # Spaces, sections, keys
//
// A space (inbox, say) has a step and a fixed number of sections, both
// set when it is created; the section count never changes afterwards, for
// a key's section is computed from it. A key is any UTF-8 string of 1 to
// MaxKeyLen bytes; it belongs to section SectionOf(key, sections), the
// 64-bit FNV-1a hash of its bytes modulo the count.
//
// Each section has one persisted number, max_seq, in the store. Numbers
// are counted in memory per key; the section's max_seq bounds every key of
// it. Before any number above max_seq is issued, max_seq is raised by the
// step (or by as many steps as a batch needs) with one statement of the
// store. So the store is written once per step numbers of a section, not
// once per key, and millions of keys need no row of their own.
//
// # Ownership
//
// A section is served by one instance at a time, its owner, under a lease
// in the store (holder, advertised address, expiry by the database's
// clock). Instances register as members with heartbeats; each one, on
// every round (Options.Interval), renews the leases it holds in one
// statement, reads the live members and the section rows, and claims the
// sections that rendezvous hashing over the live members gives it. When a
// member joins, the sections it wins are handed over: the old owner stops
// serving them, then clears its lease, and the new one takes them at its
// next round. When a member dies, its leases run out and the sections go
// to the members that win them among those still alive, the moment the
// leases run out: every round plans, for each lease another member holds,
// what to do if it is not renewed — the member that would win the section
// without its holder takes it when the lease ends, as the round read it,
// and the others send its requests there. The store decides whether the
// lease ran out, in the statement that takes it, so a plan never takes a
// section early; a plan made before a renewal that came later is refused.
//
// An owner serves a section only until its lease's local deadline: the
// time it sent the statement that granted or renewed the lease, plus the
// lease, minus a margin (Options.Margin). The database reckons the lease
// from a later moment, so the owner stops before the lease ends by the
// database's clock, even when the renewals stop coming through. A new
// owner takes a section only once its lease has run out (or was cleared),
// with one statement that also answers the section's max_seq; every key
// of the section then starts above it. That is why a restart or a move
// skips at most one step per section and never repeats a number: the old
// owner issued nothing above the max_seq it raised, and raises are
// refused (the row names the holder) once another took the section.
//
// # Requests to other instances
//
// Next and Current on a section this instance does not own return a
// *NotOwnerError naming the owner's advertised address when one holds a
// live lease; the HTTP edge forwards the request there once. While no one
// serves a section (a handover, an owner that died and whose lease has
// not run out) they return ErrUnavailable.
package sequence
