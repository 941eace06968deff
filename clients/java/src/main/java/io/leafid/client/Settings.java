package io.leafid.client;

import java.time.Duration;

/** A client's settings, checked (LeafClient.Builder makes them). Times in nanoseconds. */
final class Settings {
  final Duration requestTimeout;
  final int minRange;
  final int maxRange;
  final long refillInterval;
  final int snowflakeBatch;
  final long snowflakeMaxAge;
  final long backoffMin;
  final long backoffMax;
  final long routesInterval;
  final boolean directSequences;
  final String token; // null: none

  Settings(LeafClient.Builder b) {
    requestTimeout = positive("requestTimeout", b.requestTimeout);
    refillInterval = positive("refillInterval", b.refillInterval).toNanos();
    snowflakeMaxAge = positive("snowflakeMaxAge", b.snowflakeMaxAge).toNanos();
    backoffMin = positive("backoffMin", b.backoffMin).toNanos();
    backoffMax = positive("backoffMax", b.backoffMax).toNanos();
    routesInterval = positive("routesInterval", b.routesInterval).toNanos();
    maxRange = within("maxRange", b.maxRange, LeafClient.MAX_RANGE);
    minRange = within("minRange", b.minRange == 0 ? Math.min(100, maxRange) : b.minRange, LeafClient.MAX_RANGE);
    snowflakeBatch = within("snowflakeBatch", b.snowflakeBatch, LeafClient.MAX_SNOWFLAKE_BATCH);
    directSequences = b.directSequences;
    token = b.token == null || b.token.isEmpty() ? null : b.token;
    if (minRange > maxRange) {
      throw new IllegalArgumentException("leaf client: minRange " + minRange + " is above maxRange " + maxRange);
    }
    if (backoffMin > backoffMax) {
      throw new IllegalArgumentException("leaf client: backoffMin " + b.backoffMin + " is above backoffMax " + b.backoffMax);
    }
  }

  private static Duration positive(String name, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException("leaf client: " + name + " " + d + ": want a duration above 0");
    }
    return d;
  }

  private static int within(String name, int v, int hi) {
    if (v < 1 || v > hi) {
      throw new IllegalArgumentException("leaf client: " + name + " " + v + ": want 1 to " + hi);
    }
    return v;
  }
}
