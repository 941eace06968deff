package io.leafid.client;

import java.net.http.HttpClient;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;

/**
 * The endpoints of a client, asked in turn with failover, and the client's background threads:
 * every one is started by {@link #spawn}, which refuses once the client is closing, and {@link
 * #close} waits for them.
 */
final class Servers {
  final Settings cfg;
  final HttpClient http;
  private final Endpoint[] eps;
  private final AtomicInteger turn = new AtomicInteger(); // round robin over eps
  private final ExecutorService threads;
  private volatile boolean closing;

  Servers(List<String> endpoints, Settings cfg) {
    this.cfg = cfg;
    eps = new Endpoint[endpoints.size()];
    for (int i = 0; i < eps.length; i++) {
      eps[i] = new Endpoint(Endpoint.parse(endpoints.get(i)));
    }
    if (eps.length == 0) {
      throw new IllegalArgumentException("leaf client: no endpoints");
    }
    threads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "leaf-client");
      t.setDaemon(true);
      return t;
    });
    // No connect timeout of its own: each request's timeout covers its connection too.
    HttpClient.Builder hb = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .followRedirects(HttpClient.Redirect.NEVER);
    if (plainOnly(eps)) {
      hb.sslContext(NO_TLS.get());
    }
    http = hb.build();
    Endpoint.warmUp(http);
  }

  /**
   * Whether every endpoint is http://. Members of routing tables are too, so such a client never
   * speaks TLS, and its HttpClient is given a TLS context that trusts nothing: the JDK's default
   * one reads the CA certificates first, which made up a quarter of the CPU time of a first call
   * in a fresh JVM (0.3 of 1.3 s on a loaded EPYC core).
   */
  private static boolean plainOnly(Endpoint[] eps) {
    for (Endpoint e : eps) {
      if (!e.base.startsWith("http://")) {
        return false;
      }
    }
    return true;
  }

  /** A TLS context that trusts no certificate: a TLS connection with it fails. */
  private static final java.util.function.Supplier<SSLContext> NO_TLS = () -> {
    try {
      SSLContext c = SSLContext.getInstance("TLS");
      c.init(new KeyManager[0], new TrustManager[0], null);
      return c;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("leaf client: TLS context: " + e, e);
    }
  };

  boolean closing() {
    return closing;
  }

  /** Runs r on a thread of the client's own, unless it is closing. */
  synchronized boolean spawn(Runnable r) {
    if (closing) {
      return false;
    }
    threads.execute(r);
    return true;
  }

  /** Marks the client closing: spawn refuses from now on, and waiting calls end. */
  synchronized void startClosing() {
    closing = true;
  }

  /**
   * Waits for the background threads to end, each within a request in flight on every endpoint.
   */
  void close() {
    threads.shutdown();
    long wait = cfg.requestTimeout.toMillis() * eps.length + 1000;
    try {
      threads.awaitTermination(wait, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The first endpoint to ask for a call: the next one in the rotation. */
  int first() {
    return Math.floorMod(turn.getAndIncrement(), eps.length);
  }

  Endpoint[] endpoints() {
    return eps;
  }

  /**
   * Asks the endpoints in turn for path, starting at the next one in the rotation and skipping
   * those backing off; one that gives no usable answer is left out for a while and the next one
   * asked. An answer another server would give as well (a 4xx) is thrown at once; with no
   * endpoint left, a LeafUnavailableException with each endpoint's last error.
   */
  Endpoint.Answer get(String op, String path, String heldVersion) {
    return get(op, path, heldVersion, a -> a);
  }

  /**
   * As get, with the answer read by check, which throws a LeafException (a malformed answer is
   * INTERNAL, and failed over) for one that is not what the API promises.
   */
  <T> T get(String op, String path, String heldVersion, Function<Endpoint.Answer, T> check) {
    return send(op, "GET", path, null, heldVersion, check);
  }

  /** As get, with method and a JSON body (null: none). */
  <T> T send(String op, String method, String path, String json, String heldVersion,
      Function<Endpoint.Answer, T> check) {
    int n = eps.length;
    int first = first();
    for (int i = 0; i < n; i++) {
      Endpoint e = eps[(first + i) % n];
      if (!e.usable(Endpoint.now())) {
        continue;
      }
      if (closing) {
        throw new LeafClosedException();
      }
      T a;
      try {
        a = check.apply(e.send(http, method, path, json, cfg.requestTimeout, heldVersion, cfg.token));
      } catch (LeafException err) {
        if (!err.failsOver()) {
          e.answered();
          throw err;
        }
        e.failed(err, Endpoint.now(), cfg.backoffMin, cfg.backoffMax);
        continue;
      }
      e.answered();
      return a;
    }
    List<LeafException> errs = new ArrayList<>(n);
    StringBuilder text = new StringBuilder();
    for (Endpoint e : eps) {
      LeafException last = e.lastError();
      errs.add(last);
      if (last != null) {
        text.append(text.length() == 0 ? ": " : "; ").append(last.getMessage());
      }
    }
    if (closing) {
      throw new LeafClosedException();
    }
    throw new LeafUnavailableException("leaf client: " + op + ": no endpoint available" + text,
        null, 0, null, null, errs);
  }

  /** Nanoseconds until some endpoint's back-off ends, at least backoffMin. */
  long retryIn() {
    long t = Endpoint.now();
    long d = cfg.backoffMax;
    for (Endpoint e : eps) {
      d = Math.min(d, e.until() - t);
    }
    return Math.max(d, cfg.backoffMin);
  }
}
