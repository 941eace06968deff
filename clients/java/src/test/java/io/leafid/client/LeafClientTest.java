package io.leafid.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** LeafClient against a fake leaf server in the same process. */
class LeafClientTest {
  private FakeLeaf fake;
  private final List<LeafClient> clients = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    fake = new FakeLeaf();
  }

  @AfterEach
  void stop() {
    clients.forEach(LeafClient::close);
    fake.close();
  }

  private LeafClient client(Consumer<LeafClient.Builder> set) {
    LeafClient.Builder b = LeafClient.builder(List.of(fake.url));
    set.accept(b);
    LeafClient c = b.build();
    clients.add(c);
    return c;
  }

  private LeafClient ranges(int n) {
    return client(b -> b.minRange(n).maxRange(n));
  }

  @Test
  void nextIdIsConsecutiveAcrossRanges() {
    LeafClient c = ranges(100);
    for (long want = 1; want <= 1000; want++) {
      assertEquals(want, c.nextId("orders"));
    }
  }

  @Test
  void theSmallestUse() {
    try (LeafClient c = new LeafClient(List.of(fake.url))) {
      long id = c.nextId("orders");
      assertEquals(1L, id);
    }
  }

  @Test
  void nextRangeIsPrefetchedAtAQuarter() throws Exception {
    LeafClient c = ranges(100);
    for (int i = 0; i < 24; i++) {
      c.nextId("orders");
    }
    Thread.sleep(100);
    assertEquals(1, fake.count("/api/segment/range/orders"));
    c.nextId("orders"); // the 25th take starts the load of the next range
    for (int i = 0; i < 500 && fake.count("/api/segment/range/orders") < 2; i++) {
      Thread.sleep(20);
    }
    assertEquals(2, fake.count("/api/segment/range/orders"));
    for (int i = 0; i < 75; i++) {
      c.nextId("orders"); // the switch to the prefetched range needs no request
    }
    assertEquals(101, c.nextId("orders"));
  }

  @Test
  void nextIds() {
    LeafClient c = ranges(100);
    assertArrayEquals(new long[] {1, 2, 3, 4, 5}, c.nextIds("orders", 5));
    assertArrayEquals(new long[0], c.nextIds("orders", 0));
    assertArrayEquals(LongStream.range(6, 256).toArray(), c.nextIds("orders", 250));
    assertEquals(256, c.nextId("orders"));
    for (int n : new int[] {-1, LeafClient.MAX_N + 1}) {
      LeafRequestException e = assertThrows(LeafRequestException.class, () -> c.nextIds("orders", n));
      assertEquals(ErrorCode.INVALID_COUNT, e.code());
    }
  }

  @Test
  void threadsNeverShareAnId() throws Exception {
    LeafClient c = client(b -> b.minRange(100).maxRange(1000));
    int threads = 4;
    int each = 50_000;
    long[][] got = new long[threads][];
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int k = t;
      ts.add(new Thread(() -> {
        long[] ids = new long[each];
        for (int i = 0; i < each; i++) {
          ids[i] = k % 2 == 0 ? c.nextId("orders") : c.nextIds("orders", 1)[0];
        }
        got[k] = ids;
      }));
    }
    ts.forEach(Thread::start);
    for (Thread t : ts) {
      t.join();
    }
    Set<Long> seen = new HashSet<>();
    for (long[] ids : got) {
      for (int i = 0; i < ids.length; i++) {
        assertTrue(seen.add(ids[i]), "id " + ids[i] + " twice");
        assertTrue(i == 0 || ids[i] > ids[i - 1], "one thread's ids increase");
      }
    }
  }

  @Test
  void sourcesAndNextIdNeverShareAnId() throws Exception {
    LeafClient c = client(b -> b.minRange(100).maxRange(1000));
    int threads = 4;
    int each = 50_000;
    long[][] got = new long[threads][];
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int k = t;
      ts.add(new Thread(() -> {
        IdSource src = c.source("orders");
        long[] ids = new long[each];
        for (int i = 0; i < each; i++) {
          ids[i] = k == 0 ? c.nextId("orders") : src.nextId();
        }
        got[k] = ids;
      }));
    }
    ts.forEach(Thread::start);
    for (Thread t : ts) {
      t.join();
    }
    Set<Long> seen = new HashSet<>();
    for (long[] ids : got) {
      for (int i = 0; i < ids.length; i++) {
        assertTrue(seen.add(ids[i]), "id " + ids[i] + " twice");
        assertTrue(i == 0 || ids[i] > ids[i - 1], "one thread's ids increase");
      }
    }
  }

  @Test
  void aSourceTakesBlocksAndStopsAtClose() {
    LeafClient c = ranges(1000);
    IdSource src = c.source("orders");
    assertEquals(1, src.nextId()); // a block of 1, then 2, 4, ...
    assertEquals(2, c.nextId("orders"));
    assertEquals(3, src.nextId());
    assertEquals(4, src.nextId());
    assertEquals(5, c.nextId("orders"));
    assertEquals(ErrorCode.UNKNOWN_TAG,
        assertThrows(LeafRequestException.class, () -> c.source("nope").nextId()).code());
    c.close();
    assertThrows(LeafClosedException.class, src::nextId); // ids left in its block
  }

  @Test
  void tokenIsSent() {
    fake.token("a token of the id routes");
    LeafClient c = client(b -> b.token("a token of the id routes"));
    assertEquals(1, c.nextId("orders"));
    c.snowflake();
    LeafClient without = client(b -> b.backoffMin(Duration.ofMillis(10)).backoffMax(Duration.ofMillis(20)));
    LeafRequestException e = assertThrows(LeafRequestException.class, () -> without.nextId("orders"));
    assertEquals(401, e.status());
  }

  @Test
  void unknownTag() {
    LeafClient c = client(b -> { });
    LeafRequestException e = assertThrows(LeafRequestException.class, () -> c.nextId("nope"));
    assertEquals(ErrorCode.UNKNOWN_TAG, e.code());
    assertEquals("unknown_tag", e.serverCode());
    assertEquals(404, e.status());
    assertEquals(fake.url, e.endpoint());
    assertEquals(1, fake.count("/api/segment/range/nope"));
    for (String tag : new String[] {"", null}) {
      assertEquals(ErrorCode.INVALID_TAG, assertThrows(LeafRequestException.class, () -> c.nextId(tag)).code());
    }
  }

  @Test
  void errorAnswers() {
    Object[][] cases = {
      {503, "{\"error\":{\"code\":\"unavailable\",\"message\":\"m\"}}", ErrorCode.UNAVAILABLE},
      {500, "{\"error\":{\"code\":\"tag_misconfigured\",\"message\":\"m\"}}", ErrorCode.TAG_MISCONFIGURED},
      {410, "{\"error\":{\"code\":\"tag_exhausted\",\"message\":\"m\"}}", ErrorCode.TAG_EXHAUSTED},
      {409, "{\"error\":{\"code\":\"not_numeric\",\"message\":\"m\"}}", ErrorCode.NOT_NUMERIC},
      {400, "{\"error\":{\"code\":\"brand_new\",\"message\":\"m\"}}", ErrorCode.INVALID_REQUEST},
      {502, "<html>bad gateway</html>", ErrorCode.UNAVAILABLE},
      {429, "", ErrorCode.UNAVAILABLE},
      {403, "", ErrorCode.UNAUTHORIZED},
      {404, "", ErrorCode.NOT_FOUND},
      {200, "not json", ErrorCode.UNAVAILABLE},
      {200, "{\"tag\":\"orders\",\"start\":\"1\",\"count\":1000000}", ErrorCode.UNAVAILABLE},
    };
    for (Object[] tc : cases) {
      fake.error((Integer) tc[0], (String) tc[1]);
      LeafClient c = client(b -> b.backoffMin(Duration.ofMillis(10)).backoffMax(Duration.ofMillis(20)));
      LeafException e = assertThrows(LeafException.class, () -> c.nextId("orders"), tc[1].toString());
      assertEquals(tc[2], e.code(), tc[0] + " " + tc[1]);
      if (e.code() == ErrorCode.UNAVAILABLE) {
        assertInstanceOf(LeafUnavailableException.class, e);
      } else {
        assertInstanceOf(LeafRequestException.class, e);
      }
    }
  }

  @Test
  void failoverAndUnavailable() {
    String dead = "http://127.0.0.1:9"; // discard: nothing answers HTTP there
    LeafClient c = LeafClient.builder(List.of(dead, fake.url))
        .backoffMin(Duration.ofMillis(50)).backoffMax(Duration.ofMillis(100)).build();
    clients.add(c);
    assertEquals(1, c.nextId("orders"));
    LeafClient d = LeafClient.builder(List.of(dead))
        .backoffMin(Duration.ofMillis(50)).backoffMax(Duration.ofMillis(100)).build();
    clients.add(d);
    LeafUnavailableException e = assertThrows(LeafUnavailableException.class, () -> d.nextId("orders"));
    assertEquals(1, e.errors().size());
    assertEquals(dead, e.errors().get(0).endpoint());
    assertEquals(0, e.errors().get(0).status());
  }

  @Test
  void aHungEndpointIsLeftAfterTheRequestTimeout() throws Exception {
    // Accepts connections and never answers: only the request timeout ends a request to it.
    try (java.net.ServerSocket hung = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      String url = "http://127.0.0.1:" + hung.getLocalPort();
      LeafClient c = LeafClient.builder(List.of(url, fake.url)).requestTimeout(Duration.ofMillis(300)).build();
      clients.add(c);
      long t0 = System.nanoTime();
      assertEquals(1, c.nextId("orders"));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(ms < 2_000, "the first call took " + ms + " ms with a request timeout of 300 ms");
    }
  }

  @Test
  void aRefusedConnectionSaysSo() {
    String dead = "http://127.0.0.1:9";
    LeafClient d = LeafClient.builder(List.of(dead)).build();
    clients.add(d);
    LeafUnavailableException e = assertThrows(LeafUnavailableException.class, () -> d.nextId("orders"));
    assertTrue(e.getMessage().contains(dead + ": cannot connect"), e.getMessage());
  }

  @Test
  void aMalformedAnswerIsFailedOver() throws Exception {
    try (FakeLeaf bad = new FakeLeaf()) {
      bad.error(200, "{\"tag\":\"orders\",\"start\":\"1\",\"count\":1000000}"); // more than asked
      LeafClient c = LeafClient.builder(List.of(bad.url, fake.url)).minRange(100).maxRange(100).build();
      clients.add(c);
      for (long want = 1; want <= 300; want++) {
        assertEquals(want, c.nextId("orders"));
      }
      assertTrue(bad.count("/api/segment/range/orders") >= 1, "the bad server was asked");
    }
  }

  @Test
  void routingTables() {
    Sequences.Table t = Sequences.table(Json.parse("{\"space\":\"inbox\",\"sections\":4,\"scheme\":\"fnv1a64-mod\","
        + "\"version\":\"v1\",\"members\":[\"10.0.0.7:8080\",\"10.0.0.8:8080\"],\"owners\":[0,1,1,-1]}"), null, "http://lb:8080");
    assertEquals("v1", t.version);
    assertEquals("http://10.0.0.7:8080", t.owners[0].base);
    assertTrue(t.owners[1] == t.owners[2], "one endpoint per member");
    assertEquals(null, t.owners[3]);
    Sequences.Table next = Sequences.table(Json.parse("{\"sections\":2,\"scheme\":\"fnv1a64-mod\","
        + "\"version\":\"v2\",\"members\":[\"10.0.0.8:8080\"],\"owners\":[0,0]}"), t, "http://lb:8080");
    assertTrue(next.owners[0] == t.owners[1], "a member keeps its endpoint, and its health, across tables");
    Sequences.Table other = Sequences.table(Json.parse("{\"sections\":2,\"scheme\":\"other\","
        + "\"version\":\"v3\",\"members\":[\"a:1\"],\"owners\":[0,0]}"), t, "http://lb:8080");
    assertEquals(null, other.owners[0], "an unknown scheme: every call goes to the endpoints");
    for (String bad : new String[] {"{}", "[]", "{\"sections\":2,\"scheme\":\"fnv1a64-mod\",\"version\":\"v\",\"members\":[],\"owners\":[0,0]}",
        "{\"sections\":3,\"scheme\":\"fnv1a64-mod\",\"version\":\"v\",\"members\":[\"a:1\"],\"owners\":[0,0]}",
        "{\"sections\":1,\"scheme\":\"fnv1a64-mod\",\"version\":\"\",\"members\":[\"a:1\"],\"owners\":[0]}"}) {
      assertEquals(null, Sequences.table(Json.parse(bad), t, "http://lb:8080"), bad);
    }
    Sequences.Table secure = Sequences.table(Json.parse("{\"sections\":1,\"scheme\":\"fnv1a64-mod\","
        + "\"version\":\"v4\",\"members\":[\"10.0.0.7:8443\"],\"owners\":[0]}"), null, "https://leaf.example:8443/api");
    assertEquals("https://10.0.0.7:8443", secure.owners[0].base, "the owners keep the scheme of the endpoint that told the table");
  }

  @Test
  void snowflake() {
    LeafClient c = client(b -> b.snowflakeBatch(10));
    long last = 0;
    for (int i = 0; i < 55; i++) {
      long id = c.snowflake();
      assertTrue(id > last, "snowflake ids increase");
      last = id;
    }
    assertTrue(fake.count("/api/snowflake/batch") >= 6);
  }

  @Test
  void aSnowflakeBatchThatArrivedTooOldIsAskedForAgain() {
    LeafClient c = client(b -> b.snowflakeBatch(10).snowflakeMaxAge(Duration.ofMillis(300)));
    fake.slow(1, 600);
    assertTrue(c.snowflake() > 0);
    assertEquals(2, fake.count("/api/snowflake/batch"));
    fake.slow(2, 600); // late twice: the call fails
    LeafClient d = client(b -> b.snowflakeBatch(10).snowflakeMaxAge(Duration.ofMillis(300)));
    assertThrows(LeafUnavailableException.class, d::snowflake);
  }

  @Test
  void closedRefusesAndItsThreadsEnd() throws Exception {
    LeafClient c = ranges(100);
    c.nextId("orders");
    c.snowflake();
    c.close();
    assertThrows(LeafClosedException.class, () -> c.nextId("orders"));
    assertThrows(LeafClosedException.class, () -> c.nextIds("orders", 2));
    assertThrows(LeafClosedException.class, c::snowflake);
    assertThrows(LeafClosedException.class, () -> c.sequenceNext("inbox", "k"));
    assertEquals(ErrorCode.CLOSED, assertThrows(LeafException.class, () -> c.nextId("new")).code());
    c.close(); // a second close does nothing
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("leaf-client")) {
        t.join(5000); // close has waited for its tasks; the thread itself ends at once
        assertTrue(!t.isAlive(), "a thread of the client outlives close");
      }
    }
  }

  @Test
  void settingsAreChecked() {
    List<Consumer<LeafClient.Builder>> bad = List.of(
        b -> b.minRange(-1), b -> b.maxRange(LeafClient.MAX_RANGE + 1), b -> b.minRange(10).maxRange(5),
        b -> b.requestTimeout(Duration.ZERO), b -> b.backoffMin(Duration.ofSeconds(2)).backoffMax(Duration.ofSeconds(1)),
        b -> b.snowflakeBatch(10_001));
    for (Consumer<LeafClient.Builder> set : bad) {
      LeafClient.Builder b = LeafClient.builder(List.of(fake.url));
      set.accept(b);
      assertThrows(IllegalArgumentException.class, b::build);
    }
    for (List<String> eps : List.of(List.<String>of(), List.of("ftp://x"), List.of("http://"), List.of("http://x/?q=1"))) {
      assertThrows(IllegalArgumentException.class, () -> new LeafClient(eps), eps.toString());
    }
  }

  @Test
  void sequenceArgumentsAreCheckedWithoutARequest() {
    LeafClient c = client(b -> { });
    Object[][] cases = {
      {"", "k", 1, ErrorCode.INVALID_SPACE}, {"s", "", 1, ErrorCode.INVALID_KEY},
      {"s", "k".repeat(257), 1, ErrorCode.INVALID_KEY}, {"s", "\ud800", 1, ErrorCode.INVALID_KEY},
      {"s", "k", 0, ErrorCode.INVALID_COUNT}, {"s", "k", 10_001, ErrorCode.INVALID_COUNT},
    };
    for (Object[] tc : cases) {
      LeafRequestException e = assertThrows(LeafRequestException.class,
          () -> c.sequenceNext((String) tc[0], (String) tc[1], (Integer) tc[2]));
      assertEquals(tc[3], e.code());
    }
    assertEquals(0, fake.count("/api/sequence/"));
  }

  @Test
  void sectionOfIsTheServers() {
    // Values of the Go client's SectionOf, itself held to the server's.
    Object[][] cases = {{"u42", 26, 0}, {"k0", 14, 4}, {"ключ/☃ 1", 30, 2}, {"a", 12, 5}};
    for (Object[] tc : cases) {
      assertEquals(tc[1], Sequences.sectionOf((String) tc[0], 64), (String) tc[0]);
      assertEquals(tc[2], Sequences.sectionOf((String) tc[0], 7), (String) tc[0]);
    }
  }

  @Test
  void pathsAreEscaped() {
    assertEquals("a-b.c_d~e%2F%20%E2%98%83", Endpoint.escape("a-b.c_d~e/ ☃"));
  }
}
