package io.leafid.client;

import java.time.Duration;
import java.util.Collections;
import java.util.List;

/**
 * No server could serve the call ({@link ErrorCode#UNAVAILABLE}): none answered, or each answered
 * that it cannot serve it now; or one server's answer that it cannot now ({@link
 * ErrorCode#UNAVAILABLE}, {@link ErrorCode#STORE_NOT_DURABLE}). Retrying later may succeed; meanwhile, ids already buffered keep
 * coming.
 *
 * <p>Thrown by a call, {@link #errors()} holds the last error of each endpoint, in the order
 * configured.
 */
public class LeafUnavailableException extends LeafException {
  private static final long serialVersionUID = 1L;

  private final transient List<LeafException> errors;

  LeafUnavailableException(String message, String endpoint, int status, String serverCode,
      Duration retryAfter, List<LeafException> errors) {
    this(ErrorCode.UNAVAILABLE, message, endpoint, status, serverCode, retryAfter, errors);
  }

  LeafUnavailableException(ErrorCode code, String message, String endpoint, int status,
      String serverCode, Duration retryAfter, List<LeafException> errors) {
    super(code, message, endpoint, status, serverCode, retryAfter);
    this.errors = errors == null ? List.of() : Collections.unmodifiableList(errors);
  }

  /**
   * Returns the last error of each endpoint, in the order configured: null for one that has not
   * failed (it was backing off from an earlier failure, or was not asked). Empty for the error of
   * one server's answer.
   *
   * @return the errors, one per endpoint
   */
  public List<LeafException> errors() {
    return errors;
  }
}
