// The conformance suite's driver of the Java client (io.leafid.client): reads
// one JSON request a line on stdin, runs it with the client, writes one JSON
// answer a line on stdout (clients/conformance/README.md). The suite compiles
// it with the client's sources and runs it on JDK 17.

import io.leafid.client.LeafClient;
import io.leafid.client.LeafException;
import io.leafid.client.Worker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

public final class Driver {
  private final Map<String, LeafClient> clients = new HashMap<>();
  private Draw draw;

  public static void main(String[] args) throws IOException {
    Driver d = new Driver();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    String line;
    while ((line = in.readLine()) != null) {
      Map<String, Object> r = obj(new Reader(line).value());
      if ("exit".equals(r.get("op"))) {
        break;
      }
      Map<String, Object> a;
      try {
        a = d.run(r);
      } catch (LeafException e) {
        a = answer(List.of(), error(e.code().wire(), e.getMessage()));
      } catch (Exception e) { // a bug of the driver or the client
        a = answer(List.of(), error("driver", e.toString()));
      }
      out.println(write(a));
      out.flush();
    }
    d.clients.values().forEach(LeafClient::close);
    System.exit(0);
  }

  private Map<String, Object> run(Map<String, Object> r) throws Exception {
    String op = (String) r.get("op");
    List<String> values = new ArrayList<>();
    if (op.equals("client")) {
      clients.put((String) r.get("name"), client(r));
      return answer(values, null);
    }
    if (op.equals("draw_stop")) {
      Draw d = draw;
      draw = null;
      return d.finish();
    }
    LeafClient c = clients.get((String) r.get("client"));
    int n = r.containsKey("n") ? num(r.get("n")) : 1;
    int repeat = Math.max(r.containsKey("repeat") ? num(r.get("repeat")) : 1, 1);
    String tag = (String) r.get("tag");
    String space = (String) r.get("space");
    String key = (String) r.get("key");
    switch (op) {
      case "next":
      case "snowflake":
      case "seq_next":
      case "seq_current":
        for (int i = 0; i < repeat; i++) {
          long v = op.equals("next") ? c.nextId(tag)
              : op.equals("snowflake") ? c.snowflake()
              : op.equals("seq_next") ? c.sequenceNext(space, key, n)
              : c.sequenceCurrent(space, key);
          values.add(Long.toString(v));
        }
        break;
      case "next_n":
      case "next_ids":
        for (long v : c.nextIds(tag, n)) {
          values.add(Long.toString(v));
        }
        break;
      case "worker":
        // repeat ids made here on a worker id leased for key, then released
        try (Worker w = c.leaseWorker(key != null ? key : "conformance", java.time.Duration.ofSeconds(30))) {
          for (int i = 0; i < repeat; i++) {
            values.add(Long.toString(w.next()));
          }
        }
        break;
      case "close":
        c.close();
        break;
      case "draw_start":
        draw = new Draw(c, r, 0);
        break;
      case "draw":
        Draw d = new Draw(c, r, num(r.get("count")));
        d.join();
        return d.finish();
      default:
        return answer(values, error("driver", "unknown op " + op));
    }
    return answer(values, null);
  }

  private static LeafClient client(Map<String, Object> r) {
    List<String> eps = new ArrayList<>();
    for (Object o : (List<?>) r.get("endpoints")) {
      eps.add((String) o);
    }
    LeafClient.Builder b = LeafClient.builder(eps);
    Map<String, Object> c = r.get("config") == null ? Map.of() : obj(r.get("config"));
    for (Map.Entry<String, Object> e : c.entrySet()) {
      Object v = e.getValue();
      if (v == null || v.equals(0L) || v.equals(Boolean.FALSE)) {
        continue;
      }
      switch (e.getKey()) {
        case "request_timeout_ms": b.requestTimeout(ms(v)); break;
        case "min_range": b.minRange(num(v)); break;
        case "max_range": b.maxRange(num(v)); break;
        case "refill_interval_ms": b.refillInterval(ms(v)); break;
        case "snowflake_batch": b.snowflakeBatch(num(v)); break;
        case "snowflake_max_age_ms": b.snowflakeMaxAge(ms(v)); break;
        case "backoff_min_ms": b.backoffMin(ms(v)); break;
        case "backoff_max_ms": b.backoffMax(ms(v)); break;
        case "routes_interval_ms": b.routesInterval(ms(v)); break;
        case "no_direct_sequences": b.directSequences(false); break;
        default: throw new IllegalArgumentException("unknown config " + e.getKey());
      }
    }
    return b.build();
  }

  /** A draw: threads taking ids until stopped, or until each has count (0: no bound). */
  private static final class Draw {
    final AtomicBoolean stop = new AtomicBoolean();
    final String file;
    final Map<String, Integer> errors = new TreeMap<>(); // guarded by itself
    final List<Thread> threads = new ArrayList<>();
    final long[][] ids;
    final int[] got;

    Draw(LeafClient c, Map<String, Object> r, int count) {
      file = (String) r.get("file");
      int n = Math.max(r.containsKey("threads") ? num(r.get("threads")) : 1, 1);
      int pace = r.containsKey("pace") ? num(r.get("pace")) : 0;
      String tag = (String) r.get("tag");
      ids = new long[n][];
      got = new int[n];
      for (int t = 0; t < n; t++) {
        int k = t;
        threads.add(new Thread(() -> loop(c, tag, k, pace, count)));
      }
      threads.forEach(Thread::start);
    }

    private void loop(LeafClient c, String tag, int k, int pace, int count) {
      long[] mine = new long[1024];
      int len = 0;
      while (!stop.get() && (count == 0 || len < count)) {
        long id;
        try {
          id = c.nextId(tag);
        } catch (LeafException e) {
          synchronized (errors) {
            errors.merge(e.code().wire(), 1, Integer::sum);
          }
          sleep(1);
          continue;
        }
        if (len == mine.length) {
          mine = java.util.Arrays.copyOf(mine, len * 2);
        }
        mine[len++] = id;
        if (pace > 0 && len % pace == 0) {
          sleep(1);
        }
      }
      ids[k] = mine;
      got[k] = len;
    }

    void join() throws InterruptedException {
      for (Thread t : threads) {
        t.join();
      }
    }

    Map<String, Object> finish() throws Exception {
      stop.set(true);
      join();
      int drawn = 0;
      try (Writer w = Files.newBufferedWriter(Path.of(file))) {
        for (int t = 0; t < ids.length; t++) {
          for (int i = 0; i < got[t]; i++) {
            w.write(Long.toString(ids[t][i]));
            w.write('\n');
          }
          drawn += got[t];
        }
      }
      Map<String, Object> a = answer(List.of(), null);
      a.put("drawn", (long) drawn);
      synchronized (errors) {
        a.put("errors", new TreeMap<>(errors));
      }
      return a;
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Map<String, Object> answer(List<String> values, Map<String, Object> error) {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("values", values);
    a.put("error", error);
    return a;
  }

  private static Map<String, Object> error(String kind, String message) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("kind", kind);
    e.put("message", message);
    return e;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> obj(Object o) {
    return (Map<String, Object>) o;
  }

  private static int num(Object o) {
    return Math.toIntExact((Long) o);
  }

  private static Duration ms(Object o) {
    return Duration.ofMillis((Long) o);
  }

  /** JSON text of a value of maps, lists, strings, numbers, booleans and null. */
  private static String write(Object v) {
    StringBuilder b = new StringBuilder();
    write(b, v);
    return b.toString();
  }

  private static void write(StringBuilder b, Object v) {
    if (v == null || v instanceof Number || v instanceof Boolean) {
      b.append(v);
    } else if (v instanceof String) {
      b.append('"');
      for (char c : ((String) v).toCharArray()) {
        if (c == '"' || c == '\\') {
          b.append('\\').append(c);
        } else if (c < 0x20) {
          b.append(String.format("\\u%04x", (int) c));
        } else {
          b.append(c);
        }
      }
      b.append('"');
    } else if (v instanceof Map) {
      b.append('{');
      String sep = "";
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        b.append(sep);
        write(b, e.getKey().toString());
        b.append(':');
        write(b, e.getValue());
        sep = ",";
      }
      b.append('}');
    } else {
      b.append('[');
      String sep = "";
      for (Object o : (List<?>) v) {
        b.append(sep);
        write(b, o);
        sep = ",";
      }
      b.append(']');
    }
  }

  /** A reader of the requests' JSON: objects, arrays, strings, integers, booleans, null. */
  private static final class Reader {
    private final String s;
    private int i;

    Reader(String s) {
      this.s = s;
    }

    Object value() {
      while (Character.isWhitespace(s.charAt(i))) {
        i++;
      }
      char c = s.charAt(i);
      if (c == '{') {
        Map<String, Object> m = new LinkedHashMap<>();
        i++;
        while (skip() != '}') {
          String k = (String) value();
          skip();
          i++; // ':'
          m.put(k, value());
          if (skip() == ',') {
            i++;
          }
        }
        i++;
        return m;
      }
      if (c == '[') {
        List<Object> l = new ArrayList<>();
        i++;
        while (skip() != ']') {
          l.add(value());
          if (skip() == ',') {
            i++;
          }
        }
        i++;
        return l;
      }
      if (c == '"') {
        StringBuilder b = new StringBuilder();
        for (i++; s.charAt(i) != '"'; i++) {
          char x = s.charAt(i);
          if (x != '\\') {
            b.append(x);
            continue;
          }
          x = s.charAt(++i);
          switch (x) {
            case 'n': b.append('\n'); break;
            case 't': b.append('\t'); break;
            case 'r': b.append('\r'); break;
            case 'b': b.append('\b'); break;
            case 'f': b.append('\f'); break;
            case 'u': b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16)); i += 4; break;
            default: b.append(x);
          }
        }
        i++;
        return b.toString();
      }
      for (String w : new String[] {"true", "false", "null"}) {
        if (s.startsWith(w, i)) {
          i += w.length();
          return w.equals("null") ? null : Boolean.valueOf(w);
        }
      }
      int from = i;
      while (i < s.length() && "-0123456789".indexOf(s.charAt(i)) >= 0) {
        i++;
      }
      return Long.parseLong(s.substring(from, i));
    }

    private char skip() {
      while (Character.isWhitespace(s.charAt(i))) {
        i++;
      }
      return s.charAt(i);
    }
  }
}
