// Package bizid makes the ids people read: formatted texts whose sequence
// starts again each day, month or year, and opaque numbers that reveal
// neither order nor volume. It knows no SQL and no HTTP: the numbers come
// from leaf_alloc rows through the segment allocator (IDs), the rows and
// settings from a Store, and the time from an injected clock.
//
// # Templates
//
// A format is literal text with fields in braces:
//
//	{seq}          the sequence number, in decimal
//	{seq:N}        the same, zero-padded to at least N digits (1..19); a
//	               number past N digits widens the text, it never wraps
//	{seq:N!}       exactly N digits: past 10^N-1 the period is full and
//	               the request is refused (sequence_full) until the next
//	{date:LAYOUT}  the time of issue in the tag's zone, in Go's layout
//	               (2006 year, 01 month, 02 day, 15 hour, 04 minute, ...)
//	{{  }}         a literal brace
//
// For example ORD-{date:20060102}-{seq:6} issues ORD-20261123-000042.
// A format needs exactly one {seq}, and is refused (ErrInvalidFormat,
// with the reason) when two ids could show the same text: when the text
// before {seq} changes width (where the number begins could not be told),
// when the text after it begins with a digit (where it ends could not be
// told), or when the date does not tell two periods apart (a daily reset
// whose text shows only the month). Template.Check tests these over two
// years of days and the same days a century later, in the tag's zone.
//
// # Periods
//
// The sequence of a tag that resets comes from a leaf_alloc row of its
// own per period, named tag@KEY (orders@20261123, orders@202611,
// orders@2026), created on the period's first use by one statement that
// writes nothing if the row exists: a reset is never a write over old
// numbers. The period is the one that holds the instant of issue in the
// tag's zone, and the text is made from that same instant, so two
// instances whose clocks disagree across midnight number two different
// periods from two different rows, and their texts differ by the date.
// A tag with reset never numbers from its own row.
//
// Rows of periods that ended more than the grace ago are pruned: the
// tag's PrunedBefore mark is raised first and the rows deleted after, and
// the statement that creates a period's row creates none for a key below
// the mark, so a pruned period is never numbered again: an instance whose
// clock is that far behind gets ErrPeriodClosed.
//
// # Opaque numbers
//
// An opaque tag's numbers go through a Cipher, a keyed bijection of
// 1..2^63-1 (or 1..2^53-1, for JavaScript): a ten-round unbalanced Feistel
// network keyed by SipHash-2-4, with cycle walking over the one value of
// its domain that is not such a number. Ids stay unique and positive and
// fit the same columns; neither their order nor their differences show
// how many were issued. The key is the fleet's (configuration), each tag
// stores only its fingerprint (KeyID), and a new key applies to new tags
// only: old tags keep theirs while the instances still know it.
package bizid
