package io.leafid.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/** One leaf server as the client sees it: its base URL and its health. */
final class Endpoint {
  /** The header that carries the version of a space's routing table. */
  static final String ROUTES_VERSION = "Leaf-Routes-Version";

  /** Bound of what is read of an answer: 10,000 snowflake ids are about 240 KB of JSON. */
  static final int MAX_BODY = 1 << 20;

  private static final long ORIGIN = System.nanoTime();

  /** Whether this JVM has loaded the JDK's HTTP client: see {@link #warmUp}. */
  private static volatile boolean warm;

  final String base;

  // Guarded by this.
  private int failures;
  private long until; // now() until which it is left out
  private LeafException last; // its last failure

  Endpoint(String base) {
    this.base = base;
  }

  /** Nanoseconds on a monotonic clock that starts at 0. */
  static long now() {
    return System.nanoTime() - ORIGIN;
  }

  /**
   * Checks a base URL and returns it without a trailing slash.
   *
   * @throws IllegalArgumentException if it is not an http:// or https:// base URL
   */
  static String parse(String s) {
    if (s == null) {
      throw new IllegalArgumentException("leaf client: endpoint null");
    }
    URI u;
    try {
      u = new URI(s);
    } catch (java.net.URISyntaxException e) {
      throw new IllegalArgumentException("leaf client: endpoint " + s + ": " + e.getMessage(), e);
    }
    if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme())) {
      throw new IllegalArgumentException("leaf client: endpoint " + s + ": want an http:// or https:// URL");
    }
    if (u.getHost() == null) {
      throw new IllegalArgumentException("leaf client: endpoint " + s + ": no host");
    }
    if (u.getRawQuery() != null || u.getRawFragment() != null || u.getRawUserInfo() != null) {
      throw new IllegalArgumentException(
          "leaf client: endpoint " + s + ": want a base URL without user, query or fragment");
    }
    String b = s;
    while (b.endsWith("/")) {
      b = b.substring(0, b.length() - 1);
    }
    return b;
  }

  synchronized boolean usable(long now) {
    return now >= until;
  }

  synchronized long until() {
    return until;
  }

  synchronized void answered() {
    failures = 0;
    until = 0;
  }

  /**
   * Leaves the endpoint out for a back-off that doubles with each failure in a row, with jitter
   * (half to all of it), and at least the server's Retry-After (up to hi).
   */
  synchronized void failed(LeafException err, long now, long lo, long hi) {
    failures++;
    long d = Math.min(hi, lo << Math.min(failures - 1, 20));
    d = d / 2 + (long) (ThreadLocalRandom.current().nextDouble() * d / 2);
    Duration ra = err.retryAfter();
    if (ra != null && ra.toNanos() > d) {
      d = Math.min(ra.toNanos(), hi);
    }
    until = now + d;
    last = err;
  }

  synchronized LeafException lastError() {
    return last;
  }

  /** An answer: its decoded body and the Leaf-Routes-Version it carried. */
  static final class Answer {
    final Object body;
    final String routesVersion;
    final Endpoint endpoint;

    Answer(Object body, String routesVersion, Endpoint endpoint) {
      this.body = body;
      this.routesVersion = routesVersion;
      this.endpoint = endpoint;
    }
  }

  /**
   * GETs path and returns the decoded JSON (a text answer such as {@code 10001} decodes as a
   * number), sending token as the bearer token unless it is null. Throws a LeafException: the
   * server's error answer, or no usable answer at all.
   */
  Answer get(HttpClient http, String path, Duration timeout, String heldVersion, String token) {
    return send(http, "GET", path, null, timeout, heldVersion, token);
  }

  /** As get, with method and a JSON body (null: none). */
  Answer send(HttpClient http, String method, String path, String json, Duration timeout,
      String heldVersion, String token) {
    HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(base + path))
        .timeout(timeout).header("Accept", "application/json");
    if (json == null) {
      rb.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      rb.method(method, HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
      rb.header("Content-Type", "application/json");
    }
    if (token != null) {
      rb.header("Authorization", "Bearer " + token);
    }
    if (heldVersion != null) {
      rb.header(ROUTES_VERSION, heldVersion);
    }
    HttpResponse<InputStream> resp;
    byte[] body;
    try {
      resp = http.send(rb.build(), HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream in = resp.body()) {
        body = in.readNBytes(MAX_BODY + 1);
      }
    } catch (HttpTimeoutException e) {
      throw LeafException.transport(base, "no answer within " + timeout.toMillis() + " ms (request timeout)");
    } catch (IOException e) {
      throw LeafException.transport(base, why(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw LeafException.transport(base, "interrupted");
    }
    String seen = resp.headers().firstValue(ROUTES_VERSION).orElse(null);
    if (body.length > MAX_BODY) {
      throw LeafException.malformed(base, "more than " + MAX_BODY + " bytes");
    }
    String text = new String(body, StandardCharsets.UTF_8);
    if (resp.statusCode() < 200 || resp.statusCode() > 299) {
      LeafException err = errorAnswer(resp, text);
      err.routesVersion = seen;
      throw err;
    }
    try {
      return new Answer(Json.parse(text), seen, this);
    } catch (IllegalArgumentException e) {
      throw LeafException.malformed(base, e.getMessage());
    }
  }

  /**
   * Says why no answer came, in words: the JDK's HttpClient throws a ConnectException without a
   * message for a refused connection, and keeps the cause of others beneath.
   */
  static String why(IOException e) {
    String detail = null;
    for (Throwable t = e; t != null && detail == null; t = t.getCause()) {
      if (t instanceof java.nio.channels.UnresolvedAddressException) {
        detail = "unknown host";
      } else if (t.getMessage() != null && !t.getMessage().isBlank()) {
        detail = t.getMessage();
      }
    }
    if (e instanceof java.net.ConnectException) {
      return "cannot connect: " + (detail == null ? "connection refused" : detail);
    }
    String kind = e.getClass().getSimpleName();
    return detail == null ? kind : kind + ": " + detail;
  }

  /**
   * Loads the JDK's HTTP client before any request is timed, once a JVM: one exchange with a
   * server of its own on the loopback interface. The first exchange of a JVM loads and links the
   * client's classes, about 0.3 s of CPU and seconds on a loaded machine; paid while the client is
   * built, it counts against no request's timeout, which therefore holds from the first call.
   * Where the loopback interface cannot be used, the first request pays it.
   */
  static void warmUp(HttpClient http) {
    if (warm) {
      return;
    }
    synchronized (Endpoint.class) {
      if (warm) {
        return;
      }
      try (java.net.ServerSocket ss = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        Thread t = new Thread(() -> answerOnce(ss), "leaf-client-warm-up");
        t.setDaemon(true);
        t.start();
        String host = ss.getInetAddress().getHostAddress();
        URI u = URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + ss.getLocalPort() + "/");
        HttpRequest r = HttpRequest.newBuilder(u).timeout(Duration.ofSeconds(30)).GET().build();
        http.send(r, HttpResponse.BodyHandlers.ofInputStream()).body().close();
      } catch (IOException e) {
        // no loopback here: the first request loads the client
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      warm = true;
    }
  }

  /** Answers one request on ss with an empty 204. */
  private static void answerOnce(java.net.ServerSocket ss) {
    try (java.net.Socket s = ss.accept()) {
      s.setSoTimeout(30_000);
      InputStream in = s.getInputStream();
      int matched = 0;
      for (int c; matched < 4 && (c = in.read()) >= 0; ) {
        matched = c == "\r\n\r\n".charAt(matched) ? matched + 1 : (c == '\r' ? 1 : 0);
      }
      s.getOutputStream().write("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    } catch (IOException e) {
      // the warm-up request fails too, which is all it costs
    }
  }

  private LeafException errorAnswer(HttpResponse<?> resp, String text) {
    String code = null;
    String message = text.length() > 200 ? text.substring(0, 200) : text;
    try {
      Object e = ((Map<?, ?>) Json.parse(text)).get("error");
      Object c = ((Map<?, ?>) e).get("code");
      Object m = ((Map<?, ?>) e).get("message");
      if (c instanceof String && m instanceof String) {
        code = (String) c;
        message = (String) m;
      }
    } catch (RuntimeException notTheApis) {
      // a proxy's page, or no body: the status tells
    }
    Duration retryAfter = null;
    String ra = resp.headers().firstValue("Retry-After").orElse("");
    if (ra.matches("[0-9]{1,9}") && Long.parseLong(ra) > 0) {
      retryAfter = Duration.ofSeconds(Long.parseLong(ra));
    }
    return LeafException.answer(base, resp.statusCode(), code, message, retryAfter);
  }

  /** Percent-encodes s as one path segment: every byte of its UTF-8 but A-Z a-z 0-9 - . _ ~. */
  static String escape(String s) {
    StringBuilder b = new StringBuilder(s.length() + 8);
    for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
      int c = x & 0xff;
      if (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
          || c == '-' || c == '.' || c == '_' || c == '~') {
        b.append((char) c);
      } else {
        b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
      }
    }
    return b.toString();
  }
}
