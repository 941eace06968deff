package io.leafid.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A reader of the JSON the API answers: objects become {@code Map<String, Object>}, arrays
 * {@code List<Object>}, integers {@code Long} (a {@code Double} past a long's bounds or with a
 * fraction or exponent), strings, booleans, and null.
 */
final class Json {
  /** Nesting deeper than this is refused: no answer of the API comes near it. */
  private static final int MAX_DEPTH = 64;

  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  /** Parses text, which must be one JSON value with nothing but whitespace around it. */
  static Object parse(String text) {
    Json p = new Json(text);
    Object v = p.value(0);
    p.space();
    if (p.i != text.length()) {
      throw p.fail("text after the value");
    }
    return v;
  }

  private IllegalArgumentException fail(String what) {
    return new IllegalArgumentException("JSON: " + what + " at offset " + i);
  }

  private void space() {
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        return;
      }
      i++;
    }
  }

  private Object value(int depth) {
    if (depth > MAX_DEPTH) {
      throw fail("too deep");
    }
    space();
    if (i >= s.length()) {
      throw fail("no value");
    }
    char c = s.charAt(i);
    switch (c) {
      case '{':
        return object(depth);
      case '[':
        return array(depth);
      case '"':
        return string();
      case 't':
        return word("true", Boolean.TRUE);
      case 'f':
        return word("false", Boolean.FALSE);
      case 'n':
        return word("null", null);
      default:
        if (c == '-' || c >= '0' && c <= '9') {
          return number();
        }
        throw fail("unexpected " + c);
    }
  }

  private Object word(String w, Object v) {
    if (!s.startsWith(w, i)) {
      throw fail("not " + w);
    }
    i += w.length();
    return v;
  }

  private Map<String, Object> object(int depth) {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    space();
    if (i < s.length() && s.charAt(i) == '}') {
      i++;
      return m;
    }
    while (true) {
      space();
      if (i >= s.length() || s.charAt(i) != '"') {
        throw fail("no key");
      }
      String k = string();
      space();
      expect(':');
      m.put(k, value(depth + 1));
      space();
      if (i < s.length() && s.charAt(i) == ',') {
        i++;
        continue;
      }
      expect('}');
      return m;
    }
  }

  private List<Object> array(int depth) {
    List<Object> l = new ArrayList<>();
    i++;
    space();
    if (i < s.length() && s.charAt(i) == ']') {
      i++;
      return l;
    }
    while (true) {
      l.add(value(depth + 1));
      space();
      if (i < s.length() && s.charAt(i) == ',') {
        i++;
        continue;
      }
      expect(']');
      return l;
    }
  }

  private void expect(char c) {
    if (i >= s.length() || s.charAt(i) != c) {
      throw fail("want " + c);
    }
    i++;
  }

  private String string() {
    i++;
    StringBuilder b = null;
    int from = i;
    while (true) {
      if (i >= s.length()) {
        throw fail("unterminated string");
      }
      char c = s.charAt(i);
      if (c == '"') {
        String v = b == null ? s.substring(from, i) : b.append(s, from, i).toString();
        i++;
        return v;
      }
      if (c < 0x20) {
        throw fail("control character in string");
      }
      if (c != '\\') {
        i++;
        continue;
      }
      if (b == null) {
        b = new StringBuilder();
      }
      b.append(s, from, i);
      i++;
      b.append(escape());
      from = i;
    }
  }

  private char escape() {
    if (i >= s.length()) {
      throw fail("unterminated escape");
    }
    char c = s.charAt(i++);
    switch (c) {
      case '"': case '\\': case '/':
        return c;
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'u':
        if (i + 4 > s.length()) {
          throw fail("short \\u escape");
        }
        try {
          char u = (char) Integer.parseInt(s.substring(i, i + 4), 16);
          i += 4;
          return u;
        } catch (NumberFormatException e) {
          throw fail("bad \\u escape");
        }
      default:
        throw fail("bad escape \\" + c);
    }
  }

  private Object number() {
    int from = i;
    if (s.charAt(i) == '-') {
      i++;
    }
    boolean integral = true;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c >= '0' && c <= '9') {
        i++;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        integral = false;
        i++;
      } else {
        break;
      }
    }
    String t = s.substring(from, i);
    try {
      if (integral) {
        try {
          return Long.parseLong(t);
        } catch (NumberFormatException e) {
          return Double.parseDouble(t); // past a long's bounds
        }
      }
      return Double.parseDouble(t);
    } catch (NumberFormatException e) {
      throw fail("bad number " + t);
    }
  }

  /** s as a JSON string, quoted and escaped. */
  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
