package io.leafid.client;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Hands out segment-mode ids of leaf from ranges it leases from the servers, snowflake ids it
 * fetches in batches, and per-key sequence numbers from the owner of each key's section.
 *
 * <pre>{@code
 * try (LeafClient client = new LeafClient(List.of("http://leaf-1:8080", "http://leaf-2:8080"))) {
 *   long orderId = client.nextId("orders");
 * }
 * }</pre>
 *
 * <p>One client per process, shared by every thread: it is thread-safe, and {@link #nextId} costs
 * a map lookup and one atomic add on the range in use, with no lock. It waits for a server only on
 * a tag's first call and when ranges run out faster than they are fetched; the next range is
 * loaded in the background once a quarter of the current one is used, sized to last about {@link
 * Builder#refillInterval} at the tag's recent rate. Requests go to the endpoints in turn; one that
 * does not answer, or answers that it cannot serve now, is left out for a while and the next one
 * asked. Close the client to stop its background threads; the ids left in its ranges are lost,
 * which costs only numbers.
 *
 * <p>Every failure is a {@link LeafException} carrying the server's {@link ErrorCode}.
 */
public final class LeafClient implements AutoCloseable {
  /** The largest range a server hands out in one answer. */
  public static final int MAX_RANGE = 1_000_000;
  /** The largest n of {@link #nextIds}. */
  public static final int MAX_N = 1_000_000;
  /** The largest snowflake batch a server hands out. */
  public static final int MAX_SNOWFLAKE_BATCH = 10_000;
  /** The largest n of {@link #sequenceNext(String, String, int)}. */
  public static final int MAX_SEQUENCE_BATCH = 10_000;
  /** The longest sequence key, in bytes of UTF-8. */
  public static final int MAX_SEQUENCE_KEY = 256;

  private final Servers servers;
  private final Segments segments;
  private final Snowflakes snowflakes;
  private final Sequences sequences;

  /**
   * Makes a client of the servers at endpoints, with the default settings.
   *
   * @param endpoints base URLs of leaf servers, e.g. {@code "http://leaf-1:8080"}
   * @throws IllegalArgumentException if there is none, or one is not an http(s) base URL
   */
  public LeafClient(List<String> endpoints) {
    this(new Builder(endpoints));
  }

  private LeafClient(Builder b) {
    servers = new Servers(b.endpoints, new Settings(b));
    segments = new Segments(servers);
    snowflakes = new Snowflakes(servers);
    sequences = new Sequences(servers);
  }

  /**
   * Returns a builder of a client of the servers at endpoints, to change its settings.
   *
   * @param endpoints base URLs of leaf servers
   * @return the builder
   */
  public static Builder builder(List<String> endpoints) {
    return new Builder(endpoints);
  }

  /**
   * Returns the next id of tag.
   *
   * @param tag a numeric tag of the servers
   * @return the id, above 0
   * @throws LeafRequestException {@link ErrorCode#UNKNOWN_TAG}, {@link ErrorCode#NOT_NUMERIC} (a
   *     formatted or opaque tag), {@link ErrorCode#INVALID_REQUEST} (an ordered tag), {@link
   *     ErrorCode#INVALID_TAG}, …
   * @throws LeafUnavailableException if the tag's ranges ran out and no server gave another
   * @throws LeafClosedException if the client is closed
   */
  public long nextId(String tag) {
    return segments.next(tag);
  }

  /**
   * Returns a source of tag's ids for one thread, which hands them out with no shared write: threads
   * with a source each do not slow each other down. It makes no request; errors come from its
   * {@link IdSource#nextId}.
   *
   * @param tag a numeric tag of the servers
   * @return the source, not thread-safe
   */
  public IdSource source(String tag) {
    return new IdSource(segments, servers, tag);
  }

  /**
   * Returns n ids of tag, increasing. They may come from several ranges, so they are not always
   * consecutive.
   *
   * @param tag a numeric tag of the servers
   * @param n how many, 0 to {@link #MAX_N}
   * @return the ids
   * @throws LeafException as {@link #nextId}, and {@link ErrorCode#INVALID_COUNT} for n out of
   *     bounds
   */
  public long[] nextIds(String tag, int n) {
    return segments.next(tag, n);
  }

  /**
   * Returns a snowflake id from a batch fetched ahead of time; never one fetched longer than
   * {@link Builder#snowflakeMaxAge} ago.
   *
   * @return the id
   * @throws LeafException if no server gave a batch, or the client is closed
   */
  public long snowflake() {
    return snowflakes.next();
  }

  /**
   * Leases a worker id of the fleet's for snowflake ids made in this process (POST
   * /api/snowflake/leases), renewed in the background until the worker is closed.
   *
   * @param holder names this process: its host and pid, say
   * @param ttl the lease's length, 3 s to 10 min; 30 s is a good choice
   * @return the worker
   * @throws LeafException {@link ErrorCode#INVALID_REQUEST} where the servers have fixed worker
   *     ids, {@link ErrorCode#UNAVAILABLE} when every id is held or no server answered
   */
  public Worker leaseWorker(String holder, java.time.Duration ttl) {
    return new Worker(servers, holder, ttl);
  }

  /**
   * Reads the layout of the servers' snowflake ids (GET /api/snowflake/layout): with it, ids are
   * decoded and the bounds of a span of time computed without a call.
   *
   * @return the layout
   * @throws LeafException if no server answered, {@link ErrorCode#NOT_FOUND} where snowflake mode
   *     is off
   */
  public SnowflakeLayout snowflakeLayout() {
    return servers.get("snowflake layout", "/api/snowflake/layout", null, SnowflakeLayout::of);
  }

  /**
   * Takes the next number of key in the sequence space.
   *
   * @param space the sequence space
   * @param key the key, 1 to 256 bytes of UTF-8
   * @return the number, above every number the key was given before
   * @throws LeafException {@link ErrorCode#UNKNOWN_SPACE}, {@link ErrorCode#INVALID_KEY}, {@link
   *     ErrorCode#UNAVAILABLE}, …
   */
  public long sequenceNext(String space, String key) {
    return sequences.next(space, key, 1);
  }

  /**
   * Takes n consecutive numbers of key in the sequence space and returns the first: they are
   * first … first+n-1. One request a call, to the owner of the key's section.
   *
   * @param space the sequence space
   * @param key the key, 1 to 256 bytes of UTF-8
   * @param n how many, 1 to {@link #MAX_SEQUENCE_BATCH}
   * @return the first number
   * @throws LeafException as {@link #sequenceNext(String, String)}, and {@link
   *     ErrorCode#INVALID_COUNT} for n out of bounds
   */
  public long sequenceNext(String space, String key, int n) {
    return sequences.next(space, key, n);
  }

  /**
   * Returns the last number issued to key, without taking one.
   *
   * @param space the sequence space
   * @param key the key
   * @return the number, 0 for a key of a new space
   * @throws LeafException as {@link #sequenceNext(String, String)}
   */
  public long sequenceCurrent(String space, String key) {
    return sequences.current(space, key);
  }

  /**
   * Stops the client: waiting callers and later calls get a {@link LeafClosedException}, and the
   * background threads end (a request in flight within the request timeout). Closing twice does
   * nothing more.
   */
  @Override
  public void close() {
    servers.startClosing();
    segments.close();
    snowflakes.close();
    servers.close();
  }

  /**
   * The settings of a client. Times are {@link Duration}s above zero; each setter returns the
   * builder.
   */
  public static final class Builder {
    final List<String> endpoints;
    Duration requestTimeout = Duration.ofSeconds(2);
    int minRange; // 0: the smaller of 100 and maxRange
    int maxRange = MAX_RANGE;
    String token; // null: none
    Duration refillInterval = Duration.ofSeconds(1);
    int snowflakeBatch = 100;
    Duration snowflakeMaxAge = Duration.ofSeconds(1);
    Duration backoffMin = Duration.ofMillis(100);
    Duration backoffMax = Duration.ofSeconds(5);
    Duration routesInterval = Duration.ofSeconds(2);
    boolean directSequences = true;

    Builder(List<String> endpoints) {
      this.endpoints = List.copyOf(Objects.requireNonNull(endpoints, "endpoints"));
    }

    /**
     * How long one request may take, connecting included (2 s). Until one exchange of the JVM has
     * completed, requests have at least 10 s: the first also loads the JDK's HTTP client.
     *
     * @param d the timeout
     * @return this builder
     */
    public Builder requestTimeout(Duration d) {
      requestTimeout = d;
      return this;
    }

    /**
     * The fewest ids asked for in one range (the smaller of 100 and maxRange).
     *
     * @param n 1 to {@link #MAX_RANGE}
     * @return this builder
     */
    public Builder minRange(int n) {
      minRange = n;
      return this;
    }

    /**
     * The most ids asked for in one range ({@link #MAX_RANGE}).
     *
     * @param n 1 to {@link #MAX_RANGE}
     * @return this builder
     */
    public Builder maxRange(int n) {
      maxRange = n;
      return this;
    }

    /**
     * How long a range should last at a tag's recent rate (1 s).
     *
     * @param d the interval
     * @return this builder
     */
    public Builder refillInterval(Duration d) {
      refillInterval = d;
      return this;
    }

    /**
     * How many snowflake ids one request fetches (100).
     *
     * @param n 1 to {@link #MAX_SNOWFLAKE_BATCH}
     * @return this builder
     */
    public Builder snowflakeBatch(int n) {
      snowflakeBatch = n;
      return this;
    }

    /**
     * The oldest a snowflake id may be when handed out, from when its batch was asked for (1 s).
     *
     * @param d the age
     * @return this builder
     */
    public Builder snowflakeMaxAge(Duration d) {
      snowflakeMaxAge = d;
      return this;
    }

    /**
     * The first back-off of an endpoint that failed (100 ms), doubling with each failure in a row.
     *
     * @param d the back-off
     * @return this builder
     */
    public Builder backoffMin(Duration d) {
      backoffMin = d;
      return this;
    }

    /**
     * The longest back-off of an endpoint that failed (5 s).
     *
     * @param d the back-off
     * @return this builder
     */
    public Builder backoffMax(Duration d) {
      backoffMax = d;
      return this;
    }

    /**
     * The least time between two fetches of a space's routing table (2 s).
     *
     * @param d the interval
     * @return this builder
     */
    public Builder routesInterval(Duration d) {
      routesInterval = d;
      return this;
    }

    /**
     * Whether sequence calls go to the owner of the key's section (true), or to the endpoints
     * only (false), which forward them.
     *
     * @param direct true to call owners
     * @return this builder
     */
    public Builder directSequences(boolean direct) {
      directSequences = direct;
      return this;
    }

    /**
     * The bearer token of the servers' id routes ({@code leaf serve --id-token}), sent with every
     * request; none by default.
     *
     * @param token the token, or null for none
     * @return this builder
     */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /**
     * Makes the client.
     *
     * @return the client
     * @throws IllegalArgumentException for a setting out of bounds or a bad endpoint
     */
    public LeafClient build() {
      return new LeafClient(this);
    }
  }
}
