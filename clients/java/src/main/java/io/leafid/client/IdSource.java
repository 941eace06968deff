package io.leafid.client;

/**
 * Hands out the ids of one tag to one thread. It reserves blocks of consecutive ids from the range
 * {@link LeafClient#nextId} takes from, with one atomic add per block, and hands them out one by
 * one with no shared write: threads with an IdSource each do not contend, so ids per second grow
 * with cores, where threads sharing nextId's counter slow each other down.
 *
 * <p>An IdSource is not thread-safe: keep one per thread (a field of the thread's own object, or a
 * {@code ThreadLocal} read once per batch of work). Its ids increase within a range; across
 * sources, and between a source and nextId, ids are unique but not ordered, since a block is
 * reserved at once and handed out over time. The ids of its block not handed out when it is
 * dropped, at most 1,023, are lost, like those of the ranges when the process stops.
 */
public final class IdSource {
  /** The largest block a source reserves at once. */
  static final long MAX_BLOCK = 1024;
  /**
   * A block is at most this share of its range, so that one source does not take a small range
   * all for itself while others wait for the next.
   */
  static final long BLOCK_SHARE = 16;

  // Written on every id: padded, so that the sources of two threads, allocated side by side, do
  // not share a cache line.
  long p0, p1, p2, p3, p4, p5, p6, p7;
  long next; // counts up to end, compared for equality only (a range may end at Long.MAX_VALUE)
  long end;
  long block = 1; // the size of the next block: 1, doubling up to MAX_BLOCK
  final String tag;
  private final Segments segments;
  private final Servers servers;
  long q0, q1, q2, q3, q4, q5, q6, q7;

  IdSource(Segments segments, Servers servers, String tag) {
    this.segments = segments;
    this.servers = servers;
    this.tag = tag;
  }

  /**
   * Returns the source's next id. When its block is used up it reserves the next one, and may then
   * wait for a range as {@link LeafClient#nextId} does.
   *
   * @return the id
   * @throws LeafException as {@link LeafClient#nextId}; {@link LeafClosedException} after the
   *     client is closed, even with ids left in the block
   */
  public long nextId() {
    long n = next;
    if (n != end && !servers.closing()) {
      next = n + 1;
      return n;
    }
    return segments.refill(this);
  }
}
