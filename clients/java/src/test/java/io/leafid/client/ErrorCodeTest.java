package io.leafid.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The client's codes against the conformance suite's table, itself held to the server's. */
class ErrorCodeTest {
  @Test
  void everyCodeOfTheServersTableIsOne() throws Exception {
    Path cases = Path.of(System.getProperty("leaf.cases", "../conformance/cases.json"));
    Map<?, ?> suite = (Map<?, ?>) Json.parse(Files.readString(cases));
    Set<ErrorCode> seen = new HashSet<>();
    for (Object o : (List<?>) suite.get("error_codes")) {
      Map<?, ?> row = (Map<?, ?>) o;
      String wire = (String) row.get("code");
      ErrorCode c = ErrorCode.fromWire(wire);
      assertNotNull(c, wire + " has no ErrorCode");
      assertEquals(wire, c.wire());
      assertEquals(((Long) row.get("status")).intValue(), c.status(), wire);
      LeafException e = LeafException.answer("http://x", c.status(), wire, "m", null);
      // What a caller meets: an answer that no server can serve now is a LeafUnavailableException.
      String kind = e.code() == ErrorCode.INTERNAL || e instanceof LeafUnavailableException ? "unavailable" : e.code().wire();
      assertEquals(row.get("kind"), kind, wire);
      assertEquals(Boolean.TRUE.equals(row.get("failover")), e.failsOver(), wire);
      seen.add(c);
    }
    for (ErrorCode c : ErrorCode.values()) {
      if (c != ErrorCode.CLOSED) {
        assertEquals(true, seen.contains(c), c + " is in no row of the table");
      }
    }
  }
}
