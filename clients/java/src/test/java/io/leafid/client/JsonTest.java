package io.leafid.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
  @Test
  void values() {
    Map<String, Object> want = new LinkedHashMap<>();
    want.put("tag", "or\"d\u00e9rs/\u2603");
    want.put("start", "9223372036854775807");
    want.put("count", 1000L);
    want.put("owners", Arrays.asList(0L, -1L, 1.5, true, false, null));
    want.put("o", Map.of());
    assertEquals(want, Json.parse(" {\"tag\":\"or\\\"d\\u00e9rs\\/\u2603\", \"start\":\"9223372036854775807\","
        + "\"count\":1000,\"owners\":[0,-1,1.5,true,false,null],\"o\":{}} "));
    assertEquals(10001L, Json.parse("10001\n"));
    assertEquals(List.of(), Json.parse("[]"));
  }

  @Test
  void malformed() {
    for (String s : new String[] {"", "<html>", "{", "{\"a\":}", "[1,]", "\"abc", "1 2", "{\"a\" 1}", "nul",
        "[".repeat(100) + "]".repeat(100), "\"\\x\""}) {
      assertThrows(IllegalArgumentException.class, () -> Json.parse(s), s);
    }
  }
}
