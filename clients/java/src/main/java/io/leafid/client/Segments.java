package io.leafid.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Segment ids from ranges leased from the servers, one double buffer per tag: the range in use,
 * which the hot path takes ids from with one atomic add and no lock, and the next one, loaded in
 * the background once a quarter of the current one is used.
 */
final class Segments {
  // The load of the next range starts when a quarter of the current one is used, leaving three
  // quarters of refillInterval for a request that may have to fail over.
  private static final int PREFETCH_QUARTER = 4;

  private final Servers sv;
  private final Settings cfg;
  // The hot path's map from tag to buffer: only tags that have had a range.
  private final ConcurrentHashMap<String, Buffer> tags = new ConcurrentHashMap<>();
  private final Object lock = new Object(); // guards pending, and puts into tags
  private final Map<String, Buffer> pending = new HashMap<>(); // tags waiting for a first range

  Segments(Servers sv) {
    this.sv = sv;
    this.cfg = sv.cfg;
  }

  /** Hot path of LeafClient.nextId. */
  long next(String tag) {
    Buffer b = tag == null ? null : tags.get(tag);
    if (b != null) {
      Span s = b.cur;
      long i = s.getAndIncrement();
      long off = i - s.start;
      if (off < s.size && off != s.trigger) {
        return i;
      }
      return nextSlow(tag, b, s, i);
    }
    return nextSlow(tag, null, null, 0);
  }

  private long nextSlow(String tag, Buffer b, Span s, long i) {
    if (b == null) {
      b = buffer(tag);
    }
    while (true) {
      if (s == null) {
        s = b.cur;
        i = s.getAndIncrement();
      }
      long off = i - s.start;
      if (off < s.size) {
        if (off == s.trigger) {
          prefetch(b, s);
        }
        return i;
      }
      advance(b, s);
      s = null;
    }
  }

  /** LeafClient.nextIds: n ids, taken a range's worth at a time with one atomic add. */
  long[] next(String tag, int n) {
    if (n < 0 || n > LeafClient.MAX_N) {
      throw LeafException.refused(ErrorCode.INVALID_COUNT, n + " ids asked for, want 0 to " + LeafClient.MAX_N);
    }
    Buffer b = tag == null ? null : tags.get(tag);
    if (b == null) {
      b = buffer(tag);
    }
    long[] ids = new long[n];
    int got = 0;
    while (got < n) {
      Span s = b.cur;
      int want = n - got;
      long first = s.getAndAdd(want);
      long off = first - s.start;
      if (off < s.size) {
        int k = (int) Math.min(want, s.size - off);
        for (int j = 0; j < k; j++) {
          ids[got + j] = first + j;
        }
        got += k;
        if (s.trigger >= off && s.trigger < off + k) {
          prefetch(b, s);
        }
        continue;
      }
      advance(b, s);
    }
    for (int j = 1; j < n; j++) {
      if (ids[j - 1] > ids[j]) {
        Arrays.sort(ids); // ranges came out of order: a later one loaded first
        break;
      }
    }
    return ids;
  }

  /** Reserves src's next block and returns its first id. */
  long refill(IdSource src) {
    if (sv.closing()) {
      throw new LeafClosedException();
    }
    Buffer b = src.tag == null ? null : tags.get(src.tag);
    if (b == null) {
      b = buffer(src.tag);
    }
    while (true) {
      Span s = b.cur;
      long want = Math.min(src.block, Math.max(1, s.size / IdSource.BLOCK_SHARE));
      long off = s.getAndAdd(want) - s.start;
      if (off < s.size) {
        long end = Math.min(off + want, s.size);
        if (s.trigger >= off && s.trigger < end) {
          prefetch(b, s);
        }
        src.block = Math.min(2 * src.block, IdSource.MAX_BLOCK);
        src.next = s.start + off + 1;
        src.end = s.start + end;
        return s.start + off;
      }
      advance(b, s);
    }
  }

  /** The tag's buffer, created unpublished when it has none. */
  private Buffer buffer(String tag) {
    if (tag == null || tag.isEmpty()) {
      throw LeafException.refused(ErrorCode.INVALID_TAG, "tag " + (tag == null ? "null" : "\"\"") + ": want a non-empty string");
    }
    synchronized (lock) {
      if (sv.closing()) {
        throw new LeafClosedException();
      }
      Buffer b = tags.get(tag);
      if (b == null) {
        b = pending.computeIfAbsent(tag, t -> new Buffer(t, cfg.minRange));
      }
      return b;
    }
  }

  private void publish(Buffer b) {
    synchronized (lock) {
      pending.remove(b.tag, b);
      if (!sv.closing()) {
        tags.putIfAbsent(b.tag, b);
      }
    }
  }

  private void unpend(Buffer b) {
    synchronized (lock) {
      pending.remove(b.tag, b);
    }
  }

  /** Wakes every caller waiting for a range and every load backing off: the client is closing. */
  void close() {
    List<Buffer> all;
    synchronized (lock) {
      all = new ArrayList<>(pending.values());
      all.addAll(tags.values());
      pending.clear();
      tags.clear();
    }
    for (Buffer b : all) {
      synchronized (b) {
        b.kick = true;
        b.notifyAll();
      }
    }
  }

  private void prefetch(Buffer b, Span s) {
    synchronized (b) {
      if (b.cur == s && b.next == null && !b.running) {
        startLoadLocked(b, s.trigger + 1);
      }
    }
  }

  /**
   * Called by a take that found s used up: makes the next range current, waiting for its load if
   * need be.
   */
  private void advance(Buffer b, Span s) {
    synchronized (b) {
      while (true) {
        if (b.cur != s) {
          return;
        }
        if (b.next != null) {
          b.taken += s.size;
          b.cur = b.next;
          b.next = null;
          return;
        }
        if (sv.closing()) {
          throw new LeafClosedException();
        }
        if (s.size > 0) {
          b.wentShort = true;
        }
        if (!b.running) {
          if (!startLoadLocked(b, s.size)) {
            throw new LeafClosedException();
          }
        } else {
          b.kick = true;
          b.notifyAll();
        }
        waitRoundLocked(b);
        if (b.cur == s && b.next == null && b.err != null) {
          throw b.err;
        }
      }
    }
  }

  /** Waits until the load round under way ends; b's monitor is held. */
  private void waitRoundLocked(Buffer b) {
    long round = b.round;
    try {
      while (b.round == round && !sv.closing()) {
        b.wait(500);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeafUnavailableException("leaf client: range of \"" + b.tag + "\": interrupted while waiting",
          null, 0, null, null, null);
    }
    if (sv.closing()) {
      throw new LeafClosedException();
    }
  }

  /** Plans the next range's size and starts the thread that loads it; false once closing. */
  private boolean startLoadLocked(Buffer b, long used) {
    int size = planLocked(b, used, Endpoint.now());
    b.running = true;
    if (!sv.spawn(() -> load(b, size))) {
      b.running = false;
      return false;
    }
    return true;
  }

  /**
   * Sizes the next range to last about refillInterval at the tag's recent rate, changing by a
   * factor of 4 at most; a caller that had to wait doubles it at least.
   */
  private int planLocked(Buffer b, long used, long t) {
    long total = b.taken + used;
    double size = b.size;
    if (b.since >= 0) {
      long took = total - b.takenThen;
      long d = t - b.since;
      if (took > 0 && d > 0) {
        double want = (double) took / d * cfg.refillInterval;
        size = Math.min(Math.max(want, b.size / 4.0), b.size * 4.0);
      }
      if (b.wentShort) {
        size = Math.max(size, 2.0 * b.size);
      }
    }
    b.wentShort = false;
    b.since = t;
    b.takenThen = total;
    b.size = (int) Math.min(Math.max(size, cfg.minRange), cfg.maxRange);
    return b.size;
  }

  /**
   * Loads b's next range; after a failed round it tries again when an endpoint's back-off ends,
   * or at once when a caller waits, as long as the tag has a range in use.
   */
  private void load(Buffer b, int size) {
    String op = "range of \"" + b.tag + "\"";
    String path = b.path + size;
    while (true) {
      synchronized (b) {
        b.kick = false;
      }
      LeafException err = null;
      Span span = null;
      try {
        span = sv.get(op, path, null, a -> checkRange(a, b.tag, size));
      } catch (LeafException e) {
        err = e;
      } catch (RuntimeException e) {
        err = new LeafException(ErrorCode.INTERNAL, "leaf client: " + op + ": " + e);
      }
      boolean first;
      boolean retry;
      boolean published;
      synchronized (b) {
        if (err == null) {
          b.next = span;
        }
        b.err = err;
        b.round++;
        b.notifyAll();
        first = err == null && !b.published;
        b.published |= first;
        published = b.published;
        retry = err instanceof LeafUnavailableException && published && !sv.closing();
        b.running = retry;
      }
      if (first) {
        publish(b);
        return;
      }
      if (err != null && !published) {
        unpend(b);
        return;
      }
      if (!retry || !backOff(b, sv.retryIn())) {
        return;
      }
    }
  }

  /** Waits nanos, or until a caller kicks; false (and b not running) once closing. */
  private boolean backOff(Buffer b, long nanos) {
    long deadline = Endpoint.now() + nanos;
    synchronized (b) {
      try {
        long left;
        while (!b.kick && !sv.closing() && (left = deadline - Endpoint.now()) > 0) {
          b.wait(Math.max(1, left / 1_000_000));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (sv.closing() || Thread.currentThread().isInterrupted()) {
        b.running = false;
        b.round++;
        b.notifyAll();
        return false;
      }
      return true;
    }
  }

  static Span checkRange(Endpoint.Answer a, String tag, int asked) {
    String ep = a.endpoint.base;
    long start;
    long count;
    Object gotTag;
    try {
      Map<?, ?> m = (Map<?, ?>) a.body;
      start = Long.parseLong((String) m.get("start"));
      count = (Long) m.get("count");
      gotTag = m.get("tag");
    } catch (RuntimeException e) {
      String s = String.valueOf(a.body);
      throw LeafException.malformed(ep, (s.length() > 80 ? s.substring(0, 80) : s) + " is not a range");
    }
    if (!tag.equals(gotTag)) {
      throw LeafException.malformed(ep, "a range of tag " + gotTag + ", asked for " + tag);
    }
    if (count < 1 || count > asked || start < 1 || start > Long.MAX_VALUE - count + 1) {
      throw LeafException.malformed(ep, "a range of " + count + " ids from " + start + ", asked for " + asked);
    }
    return new Span(start, count);
  }

  /**
   * A range being handed out: ids start … start+size-1, taken from the counter this is. trigger is
   * the offset whose take starts loading the next range. Taken past the range, the counter goes
   * on: an offset of size or more (even wrapped past Long.MAX_VALUE) is no id.
   */
  @SuppressWarnings("serial")
  static final class Span extends java.util.concurrent.atomic.AtomicLong {
    final long start;
    final long size;
    final long trigger;

    Span(long start, long size) {
      super(start);
      this.start = start;
      this.size = size;
      this.trigger = size > 0 ? Math.max(1, size / PREFETCH_QUARTER) - 1 : -1;
    }
  }

  /** One tag's double buffer. Every field but cur is guarded by the buffer's monitor. */
  static final class Buffer {
    volatile Span cur = new Span(0, 0);
    final String tag;
    final String path;
    Span next;
    long since = -1; // when the last load was planned
    long taken; // ids taken from spans no longer current
    long takenThen; // ids taken in all at the last plan
    int size; // the size asked for last
    boolean wentShort; // a caller found no range since the last plan
    boolean published; // in tags
    boolean running; // a load thread runs
    LeafException err; // the last load round's error
    long round; // counts load rounds
    boolean kick; // a waiting caller asks a backing-off load to try now

    Buffer(String tag, int size) {
      this.tag = tag;
      this.path = "/api/segment/range/" + Endpoint.escape(tag) + "?count=";
      this.size = size;
    }
  }
}
