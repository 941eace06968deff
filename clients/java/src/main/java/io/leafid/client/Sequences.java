package io.leafid.client;

import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Per-key sequences: one request a call, sent to the owner of the key's section as the space's
 * routing table names it, with the table's version in Leaf-Routes-Version. An answer with another
 * version, or an owner that fails, has the table fetched again in the background, at most once
 * per routesInterval.
 */
final class Sequences {
  /** The scheme of routing tables this client reads: FNV-1a 64 of the key's UTF-8, mod sections. */
  static final String ROUTE_SCHEME = "fnv1a64-mod";

  private final Servers sv;
  private final Settings cfg;
  private final ConcurrentHashMap<String, Routes> routes = new ConcurrentHashMap<>();

  Sequences(Servers sv) {
    this.sv = sv;
    this.cfg = sv.cfg;
  }

  long next(String space, String key, int n) {
    check(space, key);
    if (n < 1 || n > LeafClient.MAX_SEQUENCE_BATCH) {
      throw LeafException.refused(ErrorCode.INVALID_COUNT, n + " numbers: want 1 to " + LeafClient.MAX_SEQUENCE_BATCH);
    }
    String path = "/api/sequence/next/" + Endpoint.escape(space) + "/" + Endpoint.escape(key) + "?count=" + n;
    return get("sequence next", space, key, path, a -> firstOf(a, n));
  }

  private static long firstOf(Endpoint.Answer a, int n) {
    try {
      List<?> seqs = (List<?>) ((Map<?, ?>) a.body).get("seqs");
      long first = Long.parseLong((String) seqs.get(0));
      boolean ok = seqs.size() == n && first >= 1;
      for (int i = 1; ok && i < n; i++) {
        ok = Long.parseLong((String) seqs.get(i)) == first + i;
      }
      if (ok) {
        return first;
      }
    } catch (RuntimeException e) {
      // not the API's answer
    }
    throw LeafException.malformed(a.endpoint.base, "not " + n + " consecutive positive sequence numbers");
  }

  long current(String space, String key) {
    check(space, key);
    String path = "/api/sequence/current/" + Endpoint.escape(space) + "/" + Endpoint.escape(key);
    return get("sequence current", space, key, path, a -> {
      if (!(a.body instanceof Long) || (Long) a.body < 0) {
        throw LeafException.malformed(a.endpoint.base, a.body + " is not a sequence number");
      }
      return (Long) a.body;
    });
  }

  private static void check(String space, String key) {
    if (space == null || space.isEmpty()) {
      throw LeafException.refused(ErrorCode.INVALID_SPACE, "sequence space: want a non-empty string");
    }
    int size = 0;
    if (key != null) {
      try {
        size = StandardCharsets.UTF_8.newEncoder().encode(CharBuffer.wrap(key)).remaining();
      } catch (CharacterCodingException e) {
        size = 0; // a lone surrogate: not text
      }
    }
    if (size < 1 || size > LeafClient.MAX_SEQUENCE_KEY) {
      throw LeafException.refused(ErrorCode.INVALID_KEY,
          "sequence key of " + size + " bytes: want 1 to " + LeafClient.MAX_SEQUENCE_KEY + " bytes of UTF-8");
    }
  }

  private <T> T get(String op, String space, String key, String path, Function<Endpoint.Answer, T> check) {
    if (sv.closing()) {
      throw new LeafClosedException();
    }
    if (!cfg.directSequences) {
      return sv.get(op, path, null, check);
    }
    Routes sr = routes.computeIfAbsent(space, s -> new Routes());
    Table t = sr.table;
    String held = null;
    if (t == null) {
      refresh(space, sr);
    } else {
      held = t.version;
    }
    Endpoint owner = t == null ? null : t.ownerOf(key);
    if (owner != null && owner.usable(Endpoint.now())) {
      try {
        Endpoint.Answer a = owner.get(sv.http, path, cfg.requestTimeout, held, cfg.token);
        T v = check.apply(a);
        owner.answered();
        note(space, sr, t, a.routesVersion);
        return v;
      } catch (LeafException err) {
        if (!err.failsOver()) {
          owner.answered();
          note(space, sr, t, err.routesVersion);
          throw err;
        }
        owner.failed(err, Endpoint.now(), cfg.backoffMin, cfg.backoffMax);
        refresh(space, sr);
      }
    }
    try {
      String[] seen = new String[1];
      T v = sv.get(op, path, held, a -> {
        seen[0] = a.routesVersion;
        return check.apply(a);
      });
      note(space, sr, t, seen[0]);
      return v;
    } catch (LeafException err) {
      note(space, sr, t, err.routesVersion);
      throw err;
    }
  }

  private void note(String space, Routes sr, Table t, String seen) {
    if (t != null && seen != null && !seen.isEmpty() && !seen.equals(t.version)) {
      refresh(space, sr);
    }
  }

  /** Fetches the space's table in the background, unless a fetch runs or began lately. */
  private void refresh(String space, Routes sr) {
    long t = Endpoint.now();
    synchronized (sr) {
      if (sr.fetching || sr.last >= 0 && t - sr.last < cfg.routesInterval) {
        return;
      }
      sr.fetching = true;
      sr.last = t;
    }
    if (!sv.spawn(() -> fetch(space, sr))) {
      synchronized (sr) {
        sr.fetching = false;
      }
    }
  }

  private void fetch(String space, Routes sr) {
    try {
      String path = "/api/sequence/routes/" + Endpoint.escape(space);
      Endpoint[] eps = sv.endpoints();
      int first = sv.first();
      for (int i = 0; i < eps.length; i++) {
        Endpoint e = eps[(first + i) % eps.length];
        if (!e.usable(Endpoint.now()) || sv.closing()) {
          continue;
        }
        Endpoint.Answer a;
        try {
          a = e.get(sv.http, path, cfg.requestTimeout, null, cfg.token);
        } catch (LeafException err) {
          if (err.failsOver()) {
            continue;
          }
          return;
        }
        Table table = table(a.body, sr.table, e.base);
        if (table != null) {
          sr.table = table;
        }
        return;
      }
    } finally {
      synchronized (sr) {
        sr.fetching = false;
      }
    }
  }

  /**
   * The table of an answer of /api/sequence/routes, or null for one that is not. Its owners are
   * called with the scheme of from, the base of the endpoint that answered: a client given
   * https:// endpoints never calls one in clear.
   */
  static Table table(Object body, Table old, String from) {
    int sections;
    String version;
    String scheme;
    List<?> members;
    List<?> owners;
    try {
      Map<?, ?> m = (Map<?, ?>) body;
      sections = Math.toIntExact((Long) m.get("sections"));
      version = (String) m.get("version");
      scheme = (String) m.get("scheme");
      members = (List<?>) m.get("members");
      owners = (List<?>) m.get("owners");
      if (sections < 1 || owners.size() != sections || version == null || version.isEmpty()
          || scheme == null || scheme.isEmpty()) {
        return null;
      }
      for (Object o : owners) {
        long x = (Long) o;
        if (x < -1 || x >= members.size()) {
          return null;
        }
      }
    } catch (RuntimeException e) {
      return null;
    }
    Endpoint[] table = new Endpoint[sections];
    if (ROUTE_SCHEME.equals(scheme)) {
      Map<String, Endpoint> known = new HashMap<>();
      if (old != null) {
        for (Endpoint e : old.owners) {
          if (e != null) {
            known.put(e.base, e);
          }
        }
      }
      for (int i = 0; i < sections; i++) {
        int o = (int) (long) (Long) owners.get(i);
        if (o >= 0) {
          table[i] = known.computeIfAbsent(
              from.substring(0, from.indexOf("://") + 3) + members.get(o), Endpoint::new);
        }
      }
    }
    return new Table(version, table);
  }

  /** The section of key: the 64-bit FNV-1a hash of its UTF-8 modulo sections, as the server's. */
  static int sectionOf(String key, int sections) {
    long h = 0xcbf29ce484222325L;
    for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xff)) * 0x100000001b3L;
    }
    return (int) Long.remainderUnsigned(h, sections);
  }

  /** A space's routing table: its version and the owner of each section (null for none). */
  static final class Table {
    final String version;
    final Endpoint[] owners;

    Table(String version, Endpoint[] owners) {
      this.version = version;
      this.owners = owners;
    }

    Endpoint ownerOf(String key) {
      return owners[sectionOf(key, owners.length)];
    }
  }

  /** A space's table and its fetches: fetching and last are guarded by the object's monitor. */
  static final class Routes {
    volatile Table table;
    boolean fetching;
    long last = -1;
  }
}
