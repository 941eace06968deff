package io.leafid.client.bench;

import io.leafid.client.IdSource;
import io.leafid.client.LeafClient;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Ids per second of LeafClient.nextId in-process, beside a baseline in the same run: one shared
 * {@link AtomicLong}'s incrementAndGet, the bare counter of Java. Needs a leaf server with
 * the tag (of step 1,000,000, so that ranges are of 1,000,000 ids and requests hardly count):
 *
 * <pre>
 * make -C clients/java bench URL=http://127.0.0.1:8080 TAG=orders
 * </pre>
 *
 * <p>Each round runs the baseline, the client's nextId and an IdSource per thread, one after the
 * other, on one thread and on two; the medians of the rounds (7 unless -Drounds=N) are reported.
 */
public final class Bench {
  private static final long N = Long.getLong("ids", 50_000_000L); // a thread, a round
  private static volatile long sink;

  private Bench() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String tag = args[1];
    int rounds = Integer.getInteger("rounds", 7);
    try (LeafClient c = LeafClient.builder(List.of(url)).minRange(1_000_000).build()) {
      AtomicLong counter = new AtomicLong();
      for (int i = 0; i < 3; i++) { // warm up: the JIT, and the first ranges fetched
        clientLoop(c, tag, N / 5);
        counterLoop(counter, N / 5);
        sourceLoop(c.source(tag), N / 5);
      }
      System.out.printf("Java %s, %s, %,d ids a thread a round, %d rounds%n",
          System.getProperty("java.version"), System.getProperty("java.vm.name"), N, rounds);
      for (int threads = 1; threads <= 2; threads++) {
        double[] base = new double[rounds];
        double[] got = new double[rounds];
        double[] src = new double[rounds];
        for (int r = 0; r < rounds; r++) {
          base[r] = rate(threads, () -> counterLoop(counter, N));
          got[r] = rate(threads, () -> clientLoop(c, tag, N));
          src[r] = rate(threads, () -> sourceLoop(c.source(tag), N));
        }
        double b = median(base);
        double g = median(got);
        double s = median(src);
        System.out.printf("%d thread(s): LeafClient.nextId %.1f M/s (rounds %s); AtomicLong %.1f M/s (rounds %s); ratio %.2f%n",
            threads, g / 1e6, millions(got), b / 1e6, millions(base), g / b);
        System.out.printf("%d thread(s): an IdSource a thread %.1f M/s (rounds %s); ratio to the AtomicLong %.2f%n",
            threads, s / 1e6, millions(src), s / b);
      }
    }
  }

  private static void clientLoop(LeafClient c, String tag, long n) {
    long x = 0;
    for (long i = 0; i < n; i++) {
      x ^= c.nextId(tag);
    }
    sink = x;
  }

  private static void sourceLoop(IdSource src, long n) {
    long x = 0;
    for (long i = 0; i < n; i++) {
      x ^= src.nextId();
    }
    sink = x;
  }

  private static void counterLoop(AtomicLong counter, long n) {
    long x = 0;
    for (long i = 0; i < n; i++) {
      x ^= counter.incrementAndGet();
    }
    sink = x;
  }

  /** Ids per second of body run on each of threads threads, which take N ids each. */
  private static double rate(int threads, Runnable body) throws InterruptedException {
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      ts.add(new Thread(body));
    }
    long t0 = System.nanoTime();
    ts.forEach(Thread::start);
    for (Thread t : ts) {
      t.join();
    }
    return N * threads / ((System.nanoTime() - t0) / 1e9);
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static String millions(double[] v) {
    StringBuilder b = new StringBuilder();
    for (double x : v) {
      b.append(b.length() == 0 ? "" : " ").append(String.format("%.0f", x / 1e6));
    }
    return b.toString();
  }
}
