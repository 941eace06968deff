package io.leafid.client;

import java.util.List;
import java.util.Map;

/**
 * Snowflake ids fetched in batches ahead of time: the batch in use and the one fetched after it,
 * each stamped with when its request was sent, so that no id is handed out older than
 * snowflakeMaxAge. Every field is guarded by this object's monitor.
 */
final class Snowflakes {
  private static final long[] NONE = new long[0];

  private final Servers sv;
  private final Settings cfg;
  private long[] cur = NONE;
  private int pos; // the next id of cur to hand out
  private long curSent;
  private long[] next = NONE;
  private long nextSent;
  private boolean running;
  private LeafException err;
  private long round;

  Snowflakes(Servers sv) {
    this.sv = sv;
    this.cfg = sv.cfg;
  }

  synchronized long next() {
    while (true) {
      if (sv.closing()) {
        throw new LeafClosedException();
      }
      long t = Endpoint.now();
      if (pos == cur.length || t - curSent > cfg.snowflakeMaxAge) {
        cur = next;
        curSent = nextSent;
        pos = 0;
        next = NONE;
        if (t - curSent > cfg.snowflakeMaxAge) {
          cur = NONE;
        }
      }
      if (pos < cur.length) {
        long id = cur[pos++];
        int left = cur.length - pos;
        if (next.length == 0 && !running
            && (2 * left < cfg.snowflakeBatch || 2 * (t - curSent) > cfg.snowflakeMaxAge)) {
          fetch();
        }
        return id;
      }
      if (!running && !fetch()) {
        throw new LeafClosedException();
      }
      long r = round;
      try {
        while (round == r && !sv.closing()) {
          wait(500);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LeafUnavailableException("leaf client: snowflake batch: interrupted while waiting",
            null, 0, null, null, null);
      }
      if (sv.closing()) {
        throw new LeafClosedException();
      }
      if (next.length == 0 && err != null) {
        throw err;
      }
    }
  }

  /** Wakes callers waiting for a batch: the client is closing. */
  synchronized void close() {
    notifyAll();
  }

  private boolean fetch() {
    running = true;
    if (!sv.spawn(this::fetchRun)) {
      running = false;
      return false;
    }
    return true;
  }

  /**
   * Fetches a batch. One whose answer took longer than snowflakeMaxAge is dropped and asked for
   * once more at once: the first request of a JVM also loads its HTTP client, which on a loaded
   * machine took longer than the default 1 s by itself.
   */
  private void fetchRun() {
    long sent = 0;
    long[] ids = NONE;
    LeafException e = null;
    for (int attempt = 0; attempt < 2; attempt++) {
      sent = Endpoint.now();
      e = null;
      try {
        ids = sv.get("snowflake batch", "/api/snowflake/batch?count=" + cfg.snowflakeBatch, null,
            a -> check(a, cfg.snowflakeBatch));
        if (Endpoint.now() - sent <= cfg.snowflakeMaxAge) {
          break;
        }
        e = new LeafUnavailableException("leaf client: snowflake batch: the answer took longer than snowflakeMaxAge",
            null, 0, null, null, null);
      } catch (LeafException x) {
        e = x;
        break;
      } catch (RuntimeException x) {
        e = new LeafException(ErrorCode.INTERNAL, "leaf client: snowflake batch: " + x);
        break;
      }
    }
    synchronized (this) {
      if (e == null) {
        next = ids;
        nextSent = sent;
      }
      err = e;
      running = false;
      round++;
      notifyAll();
    }
  }

  private static long[] check(Endpoint.Answer a, int asked) {
    long[] ids;
    try {
      List<?> l = (List<?>) ((Map<?, ?>) a.body).get("ids");
      ids = new long[l.size()];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = Long.parseLong((String) l.get(i));
      }
    } catch (RuntimeException x) {
      throw LeafException.malformed(a.endpoint.base, "not a batch of snowflake ids");
    }
    if (ids.length < 1 || ids.length > asked) {
      throw LeafException.malformed(a.endpoint.base, ids.length + " snowflake ids, asked for " + asked);
    }
    for (long id : ids) {
      if (id < 1) {
        throw LeafException.malformed(a.endpoint.base, "snowflake id " + id);
      }
    }
    return ids;
  }
}
