package io.leafid.client;

/** A call on a closed client ({@link ErrorCode#CLOSED}), or one that was waiting when it closed. */
public class LeafClosedException extends LeafException {
  private static final long serialVersionUID = 1L;

  LeafClosedException() {
    super(ErrorCode.CLOSED, "leaf client: closed");
  }
}
