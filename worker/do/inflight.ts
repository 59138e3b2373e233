/**
 * Request bytes the workspace object holds at once, over every HTTP body
 * and socket frame being processed (PROTOCOL.md §2.1 and §8.2). A Durable
 * Object has 128 MB: sixteen concurrent 16 MiB uploads took the object from
 * 389 to 842 MiB. A request that would pass the bound is answered
 * `rate_limited` (429, with a retry hint) before its body is read.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";

/** Three full request bodies: room for a few hosts uploading at once, far below 128 MB with their copies. */
export const MAX_OBJECT_INFLIGHT_BYTES = 3 * LIMITS.maxBodyBytes;

/** How long a refused caller is told to wait before sending again (Retry-After, and `retryAfterMs`). */
export const RETRY_AFTER_MS = 1000;

export class InflightBudget {
  private held = 0;
  /** The most ever held at once (tests check it stays under the bound). */
  peak = 0;

  constructor(readonly limit: number = MAX_OBJECT_INFLIGHT_BYTES) {}

  /**
   * Reserves `bytes` for one request, or returns the refusal. One request
   * of any allowed size is always admitted when nothing else is held.
   */
  reserve(bytes: number): ProtocolError | null {
    if (this.held > 0 && this.held + bytes > this.limit) {
      return new ProtocolError(
        "rate_limited",
        `the workspace is busy: at most ${this.limit} request bytes in flight; retry in ${RETRY_AFTER_MS} ms`,
        { limit: this.limit, retryAfterMs: RETRY_AFTER_MS },
      );
    }
    this.held += bytes;
    this.peak = Math.max(this.peak, this.held);
    return null;
  }

  release(bytes: number): void {
    this.held -= bytes;
  }
}
