package io.leafid.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * A leaf server in the test's process: ranges of one counter per tag, snowflake batches, and a
 * canned answer on demand. The behaviour against real servers is the conformance suite's.
 */
final class FakeLeaf implements AutoCloseable {
  private final HttpServer srv;
  private final Map<String, Long> next = new HashMap<>(); // guarded by this
  private final List<String> requests = new ArrayList<>(); // guarded by this
  private int errStatus; // guarded by this; 0: none
  private String errBody;
  private int slow; // guarded by this: how many answers to come are late
  private long slowMillis;
  private String token; // guarded by this; null: none asked
  final String url;

  FakeLeaf() throws IOException {
    // Without it, an answer waits for the delayed ACK of its headers: 40 ms a request.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    srv = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    srv.setExecutor(Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "fake-leaf");
      t.setDaemon(true);
      return t;
    }));
    srv.createContext("/", this::handle);
    srv.start();
    url = "http://127.0.0.1:" + srv.getAddress().getPort();
  }

  /** Answers every later request with status and body; status 0 stops. */
  synchronized void error(int status, String body) {
    errStatus = status;
    errBody = body;
  }

  /** Asks every later request for token as its bearer token, as leaf serve --id-token does. */
  synchronized void token(String token) {
    this.token = token;
  }

  /** Answers the next n requests after ms milliseconds. */
  synchronized void slow(int n, long ms) {
    slow = n;
    slowMillis = ms;
  }

  synchronized int count(String prefix) {
    return (int) requests.stream().filter(p -> p.startsWith(prefix)).count();
  }

  private void handle(HttpExchange x) throws IOException {
    String path = x.getRequestURI().getRawPath();
    String query = x.getRequestURI().getRawQuery();
    long count = query != null && query.startsWith("count=") ? Long.parseLong(query.substring(6)) : 1;
    int status;
    String body;
    long late = 0;
    synchronized (this) {
      requests.add(path);
      status = errStatus;
      body = errBody;
      if (status == 0 && token != null && !("Bearer " + token).equals(x.getRequestHeaders().getFirst("Authorization"))) {
        status = 401;
        body = "{\"error\":{\"code\":\"unauthorized\",\"message\":\"missing or wrong bearer token\"}}";
      }
      if (slow > 0) {
        slow--;
        late = slowMillis;
      }
    }
    if (late > 0) {
      try {
        Thread.sleep(late);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (status != 0) {
      answer(x, status, body);
    } else if (path.equals("/api/segment/range/nope")) {
      answer(x, 404, "{\"error\":{\"code\":\"unknown_tag\",\"message\":\"no such tag\"}}");
    } else if (path.startsWith("/api/segment/range/")) {
      String tag = path.substring(path.lastIndexOf('/') + 1);
      answer(x, 200, "{\"tag\":\"" + tag + "\",\"start\":\"" + take(tag, count, 1) + "\",\"count\":" + count + "}");
    } else if (path.equals("/api/snowflake/batch")) {
      long start = take("~flake", count, 1L << 40);
      StringBuilder b = new StringBuilder("{\"ids\":[");
      for (long i = 0; i < count; i++) {
        b.append(i == 0 ? "" : ",").append('"').append(start + i).append('"');
      }
      answer(x, 200, b.append("]}").toString());
    } else if (path.startsWith("/api/snowflake/leases")) {
      lease(x, path);
    } else if (path.equals("/api/snowflake/layout")) {
      answer(x, 200, "{\"time_unit\":\"ms\",\"time_bits\":41,\"worker_bits\":10,\"sequence_bits\":12,"
          + "\"order\":\"time,worker,sequence\",\"epoch_ms\":1288834974657,\"epoch\":\"2010-11-04T01:42:54.657Z\"}");
    } else {
      answer(x, 404, "{\"error\":{\"code\":\"not_found\",\"message\":\"no route\"}}");
    }
  }

  private static final String LAYOUT = "{\"time_unit\":\"ms\",\"time_bits\":41,\"worker_bits\":10,"
      + "\"sequence_bits\":12,\"order\":\"time,worker,sequence\",\"epoch_ms\":1288834974657,\"epoch\":\"x\"}";
  private long nextWorker; // guarded by this
  final java.util.Map<Long, String> leases = new java.util.HashMap<>(); // guarded by this
  final java.util.Map<Long, Long> released = new java.util.HashMap<>(); // guarded by this

  /** Worker leases: ids 0, 1, ... in turn; a renewal or release of a lease not held is lease_lost. */
  private void lease(HttpExchange x, String path) throws IOException {
    java.util.Map<?, ?> body = (java.util.Map<?, ?>) Json.parse(new String(x.getRequestBody().readAllBytes(),
        java.nio.charset.StandardCharsets.UTF_8));
    String method = x.getRequestMethod();
    int status;
    String answer;
    synchronized (this) {
      if (method.equals("POST")) {
        long id = nextWorker++;
        leases.put(id, "t" + id);
        status = 201;
        answer = "{\"worker_id\":" + id + ",\"lease\":\"t" + id + "\",\"floor_ms\":0,\"reserve_ms\":" + body.get("reserve_ms")
            + ",\"expires\":\"x\",\"expires_ms\":0,\"layout\":" + LAYOUT + "}";
      } else {
        long id = Long.parseLong(path.substring(path.lastIndexOf('/') + 1));
        if (!body.get("lease").equals(leases.get(id))) {
          status = 409;
          answer = "{\"error\":{\"code\":\"lease_lost\",\"message\":\"not this lease's\"}}";
        } else if (method.equals("DELETE")) {
          leases.remove(id);
          released.put(id, (Long) body.get("last_ms"));
          status = 200;
          answer = "{\"worker_id\":" + id + ",\"last_ms\":" + body.get("last_ms") + "}";
        } else {
          status = 200;
          answer = "{\"worker_id\":" + id + ",\"lease\":\"t" + id + "\",\"floor_ms\":0,\"reserve_ms\":"
              + body.get("reserve_ms") + ",\"expires\":\"x\",\"expires_ms\":0,\"layout\":" + LAYOUT + "}";
        }
      }
    }
    answer(x, status, answer);
  }

  private synchronized long take(String key, long count, long first) {
    long start = next.getOrDefault(key, first);
    next.put(key, start + count);
    return start;
  }

  private static void answer(HttpExchange x, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    x.getResponseHeaders().set("Content-Type", "application/json");
    x.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
    try (OutputStream out = x.getResponseBody()) {
      out.write(b);
    }
  }

  @Override
  public void close() {
    srv.stop(0);
  }
}
