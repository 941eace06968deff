package io.leafid.client;

import java.util.HashMap;
import java.util.Map;

/**
 * The error codes of leaf: one per code of the server's table (docs/http-api.md, "Errors"), and
 * {@link #CLOSED} for a call on a closed client.
 *
 * <p>Every {@link LeafException} carries one as {@link LeafException#code()}. An answer with a
 * code the client does not know is mapped by its HTTP status: a 429 or a 5xx is {@link
 * #UNAVAILABLE}, a 404 {@link #NOT_FOUND}, a 401 or 403 {@link #UNAUTHORIZED}, another 4xx {@link
 * #INVALID_REQUEST}, and a 200 that is not the API's answer {@link #INTERNAL}.
 */
public enum ErrorCode {
  /** The tag is empty or not a valid tag. */
  INVALID_TAG("invalid_tag", 400),
  /** The id is not valid. */
  INVALID_ID("invalid_id", 400),
  /** A count is out of bounds. */
  INVALID_COUNT("invalid_count", 400),
  /** The request is malformed, or asks for something the tag does not do (ranges of an ordered tag). */
  INVALID_REQUEST("invalid_request", 400),
  /** The server wants a token (or another one). */
  UNAUTHORIZED("unauthorized", 401),
  /** The tag does not exist. */
  UNKNOWN_TAG("unknown_tag", 404),
  /** No such route or object. */
  NOT_FOUND("not_found", 404),
  /** The route does not take this method. */
  METHOD_NOT_ALLOWED("method_not_allowed", 405),
  /** Creating a tag that exists. */
  TAG_EXISTS("tag_exists", 409),
  /** The tag has issued its last id. */
  TAG_EXHAUSTED("tag_exhausted", 410),
  /** The tag has issued the last id of the bound it declared (its max). */
  TAG_BOUND_REACHED("tag_bound_reached", 410),
  /** The worker lease renewed or released is no longer the holder's: acquire another. */
  LEASE_LOST("lease_lost", 409),
  /** The tag's row has a step below 1, which an operator must fix. */
  TAG_MISCONFIGURED("tag_misconfigured", 500),
  /** No server could serve the call: retrying later may succeed. */
  UNAVAILABLE("unavailable", 503),
  /**
   * The server takes numbers only from a database that keeps every commit it acknowledged ({@code
   * leaf serve --require-durable}), and its database's settings say it can forget one: the message
   * names the setting. Another server, on another store, may answer.
   */
  STORE_NOT_DURABLE("store_not_durable", 503),
  /** A server's bug, or an answer that is not what the API promises. */
  INTERNAL("internal", 500),
  /** The tag's format is not valid. */
  INVALID_FORMAT("invalid_format", 400),
  /** The tag's format cannot change. */
  FORMAT_FIXED("format_fixed", 409),
  /** Ranges of a formatted or opaque tag: its ids come one at a time from the server. */
  NOT_NUMERIC("not_numeric", 409),
  /** The period of a fixed-width sequence is over. */
  PERIOD_CLOSED("period_closed", 409),
  /** A fixed-width sequence showed its last number for this period. */
  SEQUENCE_FULL("sequence_full", 409),
  /** The sequence space is empty or not valid. */
  INVALID_SPACE("invalid_space", 400),
  /** The sequence key is empty or longer than 256 bytes of UTF-8. */
  INVALID_KEY("invalid_key", 400),
  /** The sequence space does not exist. */
  UNKNOWN_SPACE("unknown_space", 404),
  /** Creating a sequence space that exists. */
  SPACE_EXISTS("space_exists", 409),
  /** The key has issued its last number. */
  SEQUENCE_EXHAUSTED("sequence_exhausted", 410),
  /** The client was closed: not a code of the server. */
  CLOSED("closed", 0);

  private static final Map<String, ErrorCode> BY_WIRE = new HashMap<>();

  static {
    for (ErrorCode c : values()) {
      if (c != CLOSED) {
        BY_WIRE.put(c.wire, c);
      }
    }
  }

  private final String wire;
  private final int status;

  ErrorCode(String wire, int status) {
    this.wire = wire;
    this.status = status;
  }

  /**
   * Returns the code as the server writes it, e.g. {@code "unknown_tag"}.
   *
   * @return the code's text
   */
  public String wire() {
    return wire;
  }

  /**
   * Returns the HTTP status the server answers with this code (0 for {@link #CLOSED}).
   *
   * @return the status
   */
  public int status() {
    return status;
  }

  /**
   * Returns the code the server writes as {@code wire}, or null for a code the client does not
   * know.
   *
   * @param wire the code's text, e.g. {@code "unknown_tag"}
   * @return the code, or null
   */
  public static ErrorCode fromWire(String wire) {
    return wire == null ? null : BY_WIRE.get(wire);
  }

  /** The code of an answer by its HTTP status, when its body has no known code. */
  static ErrorCode ofStatus(int status) {
    if (status >= 200 && status < 300) {
      return INTERNAL;
    }
    if (status == 429 || status >= 500) {
      return UNAVAILABLE;
    }
    if (status == 404) {
      return NOT_FOUND;
    }
    if (status == 401 || status == 403) {
      return UNAUTHORIZED;
    }
    return INVALID_REQUEST;
  }
}
