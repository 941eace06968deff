package io.leafid.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** SnowflakeLayout: read from a server, and its bounds and decodings against the server's. */
class SnowflakeLayoutTest {
  @Test
  void readFromTheServer() throws Exception {
    FakeLeaf fake = new FakeLeaf();
    try (LeafClient c = new LeafClient(List.of(fake.url))) {
      SnowflakeLayout l = c.snowflakeLayout();
      assertEquals(1288834974657L, l.epochMs());
      Instant made = Instant.parse("2026-12-07T10:00:00Z");
      long[] b = l.bounds(made, made.plusSeconds(3600));
      assertEquals(made, l.time(b[0]));
      assertEquals(made.plusSeconds(3600), l.time(b[1]));
      LeafRequestException e = assertThrows(LeafRequestException.class, () -> l.bounds(made, made.minusMillis(1)));
      assertEquals(ErrorCode.INVALID_REQUEST, e.code());
    } finally {
      fake.close();
    }
  }

  /** layouts.json, the conformance suite's: the server's bounds and decodings. */
  @Test
  void theServersVectors() throws Exception {
    String text = Files.readString(Path.of("..", "conformance", "layouts.json"), StandardCharsets.UTF_8);
    for (Object o : (List<?>) Json.parse(text)) {
      Map<?, ?> v = (Map<?, ?>) o;
      Map<?, ?> f = (Map<?, ?>) v.get("layout");
      SnowflakeLayout l = new SnowflakeLayout((String) f.get("time_unit"), ((Long) f.get("time_bits")).intValue(),
          ((Long) f.get("worker_bits")).intValue(), ((Long) f.get("sequence_bits")).intValue(),
          (String) f.get("order"), (Long) f.get("epoch_ms"));
      for (Object bo : (List<?>) v.get("bounds")) {
        Map<?, ?> b = (Map<?, ?>) bo;
        long from = (Long) b.get("from_ms");
        long to = (Long) b.get("to_ms");
        if (b.get("lowest") == null) {
          assertThrows(LeafRequestException.class, () -> l.bounds(from, to), b.toString());
        } else {
          long[] want = {Long.parseLong((String) b.get("lowest")), Long.parseLong((String) b.get("highest"))};
          assertArrayEquals(want, l.bounds(from, to), f + " " + b);
        }
      }
      for (Object dO : (List<?>) v.get("decode")) {
        Map<?, ?> d = (Map<?, ?>) dO;
        long id = Long.parseLong((String) d.get("id"));
        assertEquals((Long) d.get("time_ms"), l.time(id).toEpochMilli(), d.toString());
        assertEquals((Long) d.get("worker_id"), l.workerId(id), d.toString());
        assertEquals((Long) d.get("sequence"), l.sequence(id), d.toString());
      }
    }
  }
}
