package io.leafid.client;

import java.time.Duration;

/**
 * An answer about the call itself, which every server gives alike: an unknown tag or space, a
 * tag whose ids do not come in ranges ({@link ErrorCode#NOT_NUMERIC}), an argument out of bounds
 * (refused by the client without a request), an exhausted or misconfigured tag. The client does
 * not try another server, and retrying does not help.
 */
public class LeafRequestException extends LeafException {
  private static final long serialVersionUID = 1L;

  LeafRequestException(ErrorCode code, String message, String endpoint, int status,
      String serverCode, Duration retryAfter) {
    super(code, message, endpoint, status, serverCode, retryAfter);
  }
}
