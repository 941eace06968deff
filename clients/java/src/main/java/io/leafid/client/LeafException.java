package io.leafid.client;

import java.time.Duration;

/**
 * An error of the leaf client. Every failure of a call is one, and unchecked.
 *
 * <p>{@link #code()} is what it means, one of the server's error codes; subclasses group them
 * by what a caller does about it: {@link LeafRequestException} (every server gives the same
 * answer: retrying does not help), {@link LeafUnavailableException} (no server could serve the
 * call: retrying later may) and {@link LeafClosedException}. An error of one server's answer
 * also carries the endpoint, the HTTP status and the code it sent.
 *
 * <pre>{@code
 * try {
 *   client.nextId("orders");
 * } catch (LeafRequestException e) {
 *   if (e.code() == ErrorCode.UNKNOWN_TAG) { ... }
 * } catch (LeafUnavailableException e) {
 *   ... // e.errors(): each endpoint's last error
 * }
 * }</pre>
 */
public class LeafException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What the error means. */
  private final ErrorCode code;
  /** The server whose answer this is, or null. */
  private final String endpoint;
  /** The HTTP status of the answer, or 0. */
  private final int status;
  /** The code the server sent, or null. */
  private final String serverCode;
  /** The server's Retry-After, or null. */
  private final Duration retryAfter;

  /** The Leaf-Routes-Version the answer carried, if any. */
  transient String routesVersion;

  LeafException(ErrorCode code, String message, String endpoint, int status, String serverCode,
      Duration retryAfter) {
    super(message);
    this.code = code;
    this.endpoint = endpoint;
    this.status = status;
    this.serverCode = serverCode;
    this.retryAfter = retryAfter;
  }

  LeafException(ErrorCode code, String message) {
    this(code, message, null, 0, null, null);
  }

  /**
   * Returns what the error means: the server's code, or the one its answer maps to.
   *
   * @return the error code
   */
  public ErrorCode code() {
    return code;
  }

  /**
   * Returns the base URL of the server whose answer this is, or null for an error of the client.
   *
   * @return the endpoint, or null
   */
  public String endpoint() {
    return endpoint;
  }

  /**
   * Returns the HTTP status of the answer, or 0 when no answer came.
   *
   * @return the status, or 0
   */
  public int status() {
    return status;
  }

  /**
   * Returns the code the server sent in its answer's body, or null when it sent none (a proxy's
   * error page, no answer at all).
   *
   * @return the server's code, or null
   */
  public String serverCode() {
    return serverCode;
  }

  /**
   * Returns the server's Retry-After, or null when it sent none.
   *
   * @return the delay, or null
   */
  public Duration retryAfter() {
    return retryAfter;
  }

  /** The error of an answer of a server: its class by what the code means. */
  static LeafException answer(String endpoint, int status, String serverCode, String message,
      Duration retryAfter) {
    ErrorCode c = ErrorCode.fromWire(serverCode);
    if (c == null) {
      c = ErrorCode.ofStatus(status);
    }
    String text = serverCode != null
        ? endpoint + ": " + status + " " + serverCode + ": " + message
        : (endpoint + ": " + status + " " + message).strip();
    return of(c, text, endpoint, status, serverCode, retryAfter);
  }

  /** No answer from endpoint: a connection refused or reset, a timeout. */
  static LeafException transport(String endpoint, String text) {
    return of(ErrorCode.UNAVAILABLE, endpoint + ": " + text, endpoint, 0, null, null);
  }

  /** An answer that is not what the API promises. */
  static LeafException malformed(String endpoint, String what) {
    return new LeafException(ErrorCode.INTERNAL, endpoint + ": 200: malformed answer: " + what,
        endpoint, 200, null, null);
  }

  static LeafException of(ErrorCode c, String text, String endpoint, int status, String serverCode,
      Duration retryAfter) {
    switch (c) {
      case UNAVAILABLE:
      case STORE_NOT_DURABLE:
        return new LeafUnavailableException(c, text, endpoint, status, serverCode, retryAfter, null);
      case INTERNAL:
        return new LeafException(c, text, endpoint, status, serverCode, retryAfter);
      case CLOSED:
        return new LeafClosedException();
      default:
        return new LeafRequestException(c, text, endpoint, status, serverCode, retryAfter);
    }
  }

  /** A refusal of the client itself, before any request (an empty tag, a count out of bounds). */
  static LeafRequestException refused(ErrorCode c, String text) {
    return new LeafRequestException(c, "leaf client: " + text, null, 0, null, null);
  }

  /**
   * Whether another endpoint may answer where this one failed: no answer, a 429, an unreadable
   * 200, or a 5xx other than tag_misconfigured, which every server reading the same row gives.
   */
  boolean failsOver() {
    if (status == 0 || status == 429 || status < 300) {
      return true;
    }
    if (status >= 500) {
      return !ErrorCode.TAG_MISCONFIGURED.wire().equals(serverCode);
    }
    return false;
  }
}
