// Package storeset serves one number space from several independent
// stores (typically one database per region), with no call between them on
// the way to an id. docs/many-stores.md tells operators how to use it; this
// comment tells how it works. One store alone is served through it too, as
// a set of one that records nothing (lone.go).
//
// # Classes
//
// From the set's floor F up, the number space is cut into blocks of B ids
// (DefaultBlock, just above the largest step); block j belongs to class
// j mod N of a set of N stores, and store k takes ranges only inside blocks
// of class k (segment.Class). Two stores never give the same id: their
// ranges lie in different blocks by arithmetic, whatever their rows hold.
// A set of one has no blocks: its ranges are a single store's.
//
// # The set lives in the stores
//
// Every store records its identity and its copy of the set (Record, Set):
// the members with their classes, a version, the floor. An instance reads
// every store's record when it opens the set and refuses a configuration
// that differs from it (Open, check.go); every range is taken by a
// compare-and-set that also checks the version its store records, so none
// is taken under a set that changed. A change of the set (Change, admin.go)
// moves every member through a changing state to a new version whose floor
// lies above every id issued before; Add and Retire (grow.go) are the
// changes leaf store add and retire make.
//
// # Loads and failover
//
// A load goes to the first configured store that is up, then to the
// others in their order (allocate.go); the first loads of many tags that
// arrive together take one transaction per store (batch.go). What has one
// counter (sequences,
// ordered, formatted and opaque tags) lives in the home store alone and is
// numbered there with no class (home.go).
//
// # Marks and the failover jump
//
// A store restored from a backup has rows below ids it already gave. An
// instance remembers what each store gave it and refuses to go below; an
// instance that just started remembers nothing, so each instance writes,
// every Options.MarkInterval, the highest max_id each store gave it into
// every other store (the marks, marks.go), and reads a store's marks from
// the others before its first range of a tag from that store. A row found
// below its mark is moved past the mark plus Options.FailoverJump, which
// covers the ranges taken between the last mark written and the restore.
//
// # A clean stop
//
// On a clean stop the unused tail of each tag's last range goes back to
// the store that gave it, by the same compare-and-set as a single store's,
// and the marks of that row are set back with it, so that the next
// instance continues where this one stopped instead of taking the row for
// one gone back in time (handback.go).
//
// # Worker ids
//
// Each store leases snowflake worker ids only in its own part of the
// worker-id space (Set.Workers, leases.go), so regions never run the same
// worker id.
package storeset
