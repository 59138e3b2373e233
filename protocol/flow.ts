/**
 * Flow control on a socket (PROTOCOL.md §8.2), one rule for both sides: the
 * host's request window (client/transport/ws-window.ts) keeps to it, and the
 * object (worker/do/socket.ts) refuses a request that breaks it.
 */
import { LIMITS, type Limits } from "./limits.ts";

/** What one socket has sent and not had answered. */
export interface InFlight {
  readonly requests: number;
  readonly bytes: number;
}

/** Request bytes a socket may have in flight: two full frames. */
export function inflightByteBound(limits: Pick<Limits, "maxBodyBytes">): number {
  return 2 * limits.maxBodyBytes;
}

/**
 * Whether one more request frame of `bytes` fits: at most `maxInflight`
 * requests, and at most inflightByteBound bytes unless it would be the only
 * one (a frame of any allowed size may always be sent alone).
 */
export function fitsWindow(
  inFlight: InFlight,
  bytes: number,
  limits: Pick<Limits, "maxInflight" | "maxBodyBytes">,
): boolean {
  if (inFlight.requests >= limits.maxInflight) return false;
  return inFlight.requests === 0 || inFlight.bytes + bytes <= inflightByteBound(limits);
}

/** Answer bytes a socket may leave unacknowledged before its requests are refused: eight full objects/get answers, 32 MiB. */
export const MAX_UNACKED_BYTES = 8 * LIMITS.maxGetBytes;
/** The server follows the answer that brings the unacknowledged bytes to this (one full objects/get answer) with a mark. */
export const MARK_AFTER_BYTES = LIMITS.maxGetBytes;
/**
 * How long a mark may go unacknowledged before the server closes the socket:
 * a host reads the answers before the mark first, at most MAX_UNACKED_BYTES,
 * so this allows a reader of ~1 MiB/s.
 */
export const ACK_TIMEOUT_MS = 30_000;
