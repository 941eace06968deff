package io.leafid.client;

import java.time.Duration;
import java.util.Map;

/**
 * A worker id of the fleet's ({@link LeafClient#leaseWorker}), from the pool the servers lease
 * their own from: no other generator of the fleet makes ids with it meanwhile. {@link #next}
 * makes snowflake ids of the fleet's layout in memory. The lease is renewed by a daemon thread
 * every third of the TTL, each renewal recording a reserve (now plus the TTL less a fifth of it)
 * before ids are made up to it; no id is made once a renewal was refused ({@link
 * ErrorCode#LEASE_LOST}) or none succeeded within the TTL less the margin. {@link #close}
 * releases it. Thread-safe.
 */
public final class Worker implements AutoCloseable {
  private final Servers sv;
  private final long ttlMs;
  private final long marginMs;
  private final long workerId;
  private final String token;
  private final SnowflakeLayout layout;
  private final long floorMs;
  private final long unitMs;
  private final int sequenceBits;
  private final Thread renewer;
  private long reserve; // guarded by this
  private long until; // guarded by this: no id at or after it unless renewed
  private LeafException lost; // guarded by this
  private long last; // guarded by this
  private long seq; // guarded by this

  Worker(Servers sv, String holder, Duration ttl) {
    this.sv = sv;
    this.ttlMs = ttl.toMillis();
    this.marginMs = ttlMs / 5;
    long start = System.currentTimeMillis();
    Map<?, ?> a = call("lease a worker id", "POST", "/api/snowflake/leases",
        "{\"holder\":" + Json.quote(holder) + ",\"ttl_ms\":" + ttlMs + ",\"reserve_ms\":" + (start + ttlMs - marginMs) + "}");
    this.workerId = (Long) a.get("worker_id");
    this.token = (String) a.get("lease");
    this.floorMs = (Long) a.get("floor_ms");
    this.reserve = (Long) a.get("reserve_ms");
    Map<?, ?> l = (Map<?, ?>) a.get("layout");
    this.layout = new SnowflakeLayout((String) l.get("time_unit"), ((Long) l.get("time_bits")).intValue(),
        ((Long) l.get("worker_bits")).intValue(), ((Long) l.get("sequence_bits")).intValue(),
        (String) l.get("order"), (Long) l.get("epoch_ms"));
    this.unitMs = layout.unitMs();
    this.sequenceBits = ((Long) l.get("sequence_bits")).intValue();
    this.until = start + ttlMs - marginMs;
    this.last = unitOf(floorMs);
    this.seq = 1L << sequenceBits; // the floor's unit is spent
    this.renewer = new Thread(this::renewLoop, "leaf-worker-renew");
    renewer.setDaemon(true);
    renewer.start();
  }

  private Map<?, ?> call(String op, String method, String path, String json) {
    return sv.send(op, method, path, json, null, a -> {
      if (!(a.body instanceof Map)) {
        throw LeafException.malformed(a.endpoint.base, "not an object");
      }
      return (Map<?, ?>) a.body;
    });
  }

  private long unitOf(long ms) {
    return Math.floorDiv(ms - layout.epochMs(), unitMs);
  }

  /**
   * The worker id leased.
   *
   * @return the worker id
   */
  public long workerId() {
    return workerId;
  }

  /**
   * The layout of the fleet's snowflake ids.
   *
   * @return the layout
   */
  public SnowflakeLayout layout() {
    return layout;
  }

  /**
   * The last Unix millisecond an earlier holder of the id may have made an id at: another
   * library's generator given {@link #workerId} starts after it.
   *
   * @return the floor
   */
  public long floorMs() {
    return floorMs;
  }

  /**
   * Throws unless the lease lets this process make ids now.
   *
   * @throws LeafException {@link ErrorCode#LEASE_LOST}, {@link ErrorCode#UNAVAILABLE} (not renewed
   *     in time) or {@link ErrorCode#CLOSED}
   */
  public synchronized void valid() {
    validLocked(System.currentTimeMillis());
  }

  private void validLocked(long now) {
    if (lost != null) {
      throw lost;
    }
    if (now >= until) {
      throw new LeafUnavailableException("leaf client: worker lease not renewed in time", null, 0, null, null, null);
    }
  }

  /**
   * A snowflake id of the fleet's layout with this worker id: above every one it made, after the
   * floor, within the reserve. Waits for the next unit of time when the current one has no
   * sequence number left.
   *
   * @return the id
   * @throws LeafException as {@link #valid}
   */
  public long next() {
    while (true) {
      long wait;
      synchronized (this) {
        long now = System.currentTimeMillis();
        validLocked(now);
        long unit = unitOf(now);
        if (unit > unitOf(reserve)) {
          throw new LeafUnavailableException("leaf client: worker lease not renewed in time", null, 0, null, null, null);
        }
        if (unit > last) {
          last = unit;
          seq = 0;
        }
        if (seq < 1L << sequenceBits) {
          return layout.compose(last, workerId, seq++);
        }
        wait = layout.epochMs() + (last + 1) * unitMs - now;
      }
      if (wait > 1000) {
        throw new LeafUnavailableException("leaf client: the clock is " + wait + " ms behind the worker's last id or floor",
            null, 0, null, null, null);
      }
      if (wait > 1) {
        try {
          Thread.sleep(wait - 1);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new LeafUnavailableException("leaf client: interrupted", null, 0, null, null, null);
        }
      } else {
        Thread.onSpinWait();
      }
    }
  }

  private void renewLoop() {
    long every = ttlMs / 3;
    long wait = every;
    while (true) {
      try {
        Thread.sleep(wait);
      } catch (InterruptedException e) {
        return;
      }
      long start = System.currentTimeMillis();
      Map<?, ?> a;
      try {
        a = call("renew a worker lease", "PUT", "/api/snowflake/leases/" + workerId,
            "{\"lease\":" + Json.quote(token) + ",\"ttl_ms\":" + ttlMs + ",\"reserve_ms\":" + (start + ttlMs - marginMs) + "}");
      } catch (LeafException e) {
        if (e.code() == ErrorCode.LEASE_LOST || e.code() == ErrorCode.CLOSED) {
          synchronized (this) {
            lost = e;
          }
          return;
        }
        wait = Math.min(every, 1000); // try again soon
        continue;
      }
      synchronized (this) {
        reserve = Math.max(reserve, (Long) a.get("reserve_ms"));
        until = start + ttlMs - marginMs;
      }
      wait = every;
    }
  }

  /** Stops renewing and releases the lease, recording the last time an id was made at. */
  @Override
  public void close() {
    renewer.interrupt();
    try {
      renewer.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long lastMs;
    synchronized (this) {
      if (lost != null) {
        return;
      }
      lost = new LeafClosedException();
      lastMs = Math.max(layout.epochMs() + (last + 1) * unitMs - 1, floorMs);
    }
    call("release a worker lease", "DELETE", "/api/snowflake/leases/" + workerId,
        "{\"lease\":" + Json.quote(token) + ",\"last_ms\":" + lastMs + "}");
  }
}
