/**
 * Request bytes the workspace object holds at once, over every HTTP body
 * and socket frame being processed, with what decoding them holds
 * (PROTOCOL.md §2.1, §2.2 and §8.2). A Durable Object has 128 MB: sixteen
 * concurrent 16 MiB uploads took the object from 389 to 842 MiB, and three
 * 14 MB pushes of 60,000-chunk files grew it by 150 MiB once decoded. A
 * request that would pass the bound is answered `rate_limited` (429, with
 * a retry hint) before its body is read, or before it is decoded.
 */
import { weighCbor } from "../../protocol/cbor-weight.ts";
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
    return this.grow(0, bytes);
  }

  /**
   * Adds `extra` to a request that holds `own` already (its body, reserved
   * before it was read; the extra is what decoding it will hold), or
   * returns the refusal: as reserve's, with only other requests in flight.
   */
  grow(own: number, extra: number): ProtocolError | null {
    if (this.held > own && this.held + extra > this.limit) {
      return new ProtocolError(
        "rate_limited",
        `the workspace is busy: at most ${this.limit} request bytes in flight; retry in ${RETRY_AFTER_MS} ms`,
        { limit: this.limit, retryAfterMs: RETRY_AFTER_MS },
      );
    }
    this.held += extra;
    this.peak = Math.max(this.peak, this.held);
    return null;
  }

  release(bytes: number): void {
    this.held -= bytes;
  }
}

/**
 * What decoding `body` will hold beside its bytes (protocol/cbor-weight.ts),
 * or its refusal: past `maxBodyItems` items, malformed, or using tags, found
 * before anything of it is decoded.
 */
export function decodedWeight(body: Uint8Array): number | ProtocolError {
  try {
    return weighCbor(body, LIMITS.maxBodyItems).bytes;
  } catch (e) {
    if (e instanceof ProtocolError) return e;
    throw e;
  }
}
