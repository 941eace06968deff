package io.leafid.client;

import java.time.Instant;
import java.util.Map;

/**
 * How a server's snowflake ids are made ({@link LeafClient#snowflakeLayout()}, GET
 * /api/snowflake/layout): the time since the epoch in a unit of time on top, then the worker id
 * and the sequence. With it, ids are decoded and the bounds of a span of time computed without a
 * call. Immutable.
 */
public final class SnowflakeLayout {
  private final long unitMs;
  private final int timeBits;
  private final int workerBits;
  private final int sequenceBits;
  private final boolean sequenceAboveWorker;
  private final long epochMs;

  /**
   * A layout.
   *
   * @param timeUnit "ms", "10ms" or "s"
   * @param timeBits the time field's width
   * @param workerBits the worker id's width
   * @param sequenceBits the sequence's width
   * @param order "time,worker,sequence" (Leaf's) or "time,sequence,worker" (sonyflake's)
   * @param epochMs the start of the time field, in Unix milliseconds
   * @throws IllegalArgumentException for a layout no server has
   */
  public SnowflakeLayout(String timeUnit, int timeBits, int workerBits, int sequenceBits,
      String order, long epochMs) {
    switch (timeUnit) {
      case "ms":
        unitMs = 1;
        break;
      case "10ms":
        unitMs = 10;
        break;
      case "s":
        unitMs = 1000;
        break;
      default:
        throw new IllegalArgumentException("time unit " + timeUnit + " is none of ms, 10ms, s");
    }
    int n = timeBits + workerBits + sequenceBits;
    if (timeBits < 1 || workerBits < 1 || sequenceBits < 1 || (n != 63 && n != 53)) {
      throw new IllegalArgumentException("widths " + timeBits + ", " + workerBits + ", "
          + sequenceBits + " do not make 63 or 53 bits");
    }
    if (!order.equals("time,worker,sequence") && !order.equals("time,sequence,worker")) {
      throw new IllegalArgumentException("order " + order + " is unknown");
    }
    this.timeBits = timeBits;
    this.workerBits = workerBits;
    this.sequenceBits = sequenceBits;
    this.sequenceAboveWorker = order.equals("time,sequence,worker");
    this.epochMs = epochMs;
  }

  static SnowflakeLayout of(Endpoint.Answer a) {
    try {
      Map<?, ?> m = (Map<?, ?>) a.body;
      return new SnowflakeLayout((String) m.get("time_unit"), ((Long) m.get("time_bits")).intValue(),
          ((Long) m.get("worker_bits")).intValue(), ((Long) m.get("sequence_bits")).intValue(),
          (String) m.get("order"), (Long) m.get("epoch_ms"));
    } catch (RuntimeException x) {
      throw LeafException.malformed(a.endpoint.base, "not a snowflake layout: " + x.getMessage());
    }
  }

  /**
   * The epoch.
   *
   * @return the start of the time field, in Unix milliseconds
   */
  public long epochMs() {
    return epochMs;
  }

  private int shift() {
    return workerBits + sequenceBits;
  }

  long unitMs() {
    return unitMs;
  }

  /** The id of unit of time, worker id and sequence number, in the layout's order. */
  long compose(long unit, long workerId, long seq) {
    if (sequenceAboveWorker) {
      return unit << shift() | seq << workerBits | workerId;
    }
    return unit << shift() | workerId << sequenceBits | seq;
  }

  /**
   * The largest id of the layout.
   *
   * @return 2^63-1 or 2^53-1
   */
  public long maxId() {
    return (1L << (timeBits + shift())) - 1; // with 63 bits, the wrap makes Long.MAX_VALUE
  }

  /**
   * The start of an id's unit of time, as GET /api/snowflake/decode/{id} says it.
   *
   * @param id an id of the layout
   * @return the start of its unit of time
   * @throws LeafRequestException {@link ErrorCode#INVALID_ID} for an id outside 0..{@link #maxId}
   */
  public Instant time(long id) {
    check(id);
    return Instant.ofEpochMilli(epochMs + (id >>> shift()) * unitMs);
  }

  /**
   * An id's worker id.
   *
   * @param id an id of the layout
   * @return its worker id
   * @throws LeafRequestException {@link ErrorCode#INVALID_ID} for an id outside 0..{@link #maxId}
   */
  public long workerId(long id) {
    check(id);
    return id >>> (sequenceAboveWorker ? 0 : sequenceBits) & ((1L << workerBits) - 1);
  }

  /**
   * An id's sequence number within its unit of time.
   *
   * @param id an id of the layout
   * @return its sequence number
   * @throws LeafRequestException {@link ErrorCode#INVALID_ID} for an id outside 0..{@link #maxId}
   */
  public long sequence(long id) {
    check(id);
    return id >>> (sequenceAboveWorker ? workerBits : 0) & ((1L << sequenceBits) - 1);
  }

  private void check(long id) {
    if (id < 0 || id > maxId()) {
      throw LeafException.refused(ErrorCode.INVALID_ID, id + " is outside 0.." + maxId());
    }
  }

  /**
   * The lowest and highest id that an id made at any instant from {@code from} to {@code to},
   * both included, can be, as GET /api/snowflake/bounds says: every id between them was made in
   * a unit of time of the interval, widened to whole units, so {@code id BETWEEN lo AND hi} finds
   * the rows made in it. An interval that begins before the epoch begins at it; one that ends
   * after the layout's time runs out ends with it.
   *
   * @param from the interval's start
   * @param to the interval's end, included
   * @return {lowest, highest}
   * @throws LeafRequestException {@link ErrorCode#INVALID_REQUEST} for an interval that ends
   *     before it begins, ends before the epoch or begins after the layout's end
   */
  public long[] bounds(Instant from, Instant to) {
    return bounds(from.toEpochMilli(), to.toEpochMilli());
  }

  /**
   * {@link #bounds(Instant, Instant)} in Unix milliseconds.
   *
   * @param fromMs the interval's start
   * @param toMs the interval's end, included
   * @return {lowest, highest}
   * @throws LeafRequestException as {@link #bounds(Instant, Instant)}
   */
  public long[] bounds(long fromMs, long toMs) {
    if (toMs < fromMs) {
      throw invalid("it ends at " + toMs + ", before it begins at " + fromMs);
    }
    long first = Math.floorDiv(fromMs - epochMs, unitMs);
    long last = Math.floorDiv(toMs - epochMs, unitMs);
    long maxTime = (1L << timeBits) - 1;
    if (last < 0) {
      throw invalid("it ends at " + toMs + ", before the epoch " + epochMs);
    }
    if (first > maxTime) {
      throw invalid("it begins at " + fromMs + ", after the layout's time runs out");
    }
    first = Math.max(first, 0);
    last = Math.min(last, maxTime);
    int s = shift();
    return new long[] {first << s, last << s | ((1L << s) - 1)};
  }

  private static LeafRequestException invalid(String why) {
    return LeafException.refused(ErrorCode.INVALID_REQUEST, "invalid interval of time: " + why);
  }
}
