/**
 * The details of the refusals a host acts on, read back into types
 * (PROTOCOL.md §10's table): one reader per code, each null when the error
 * is another code or does not carry the detail. The client library reads
 * details only through these, never by casting `details`.
 */
import { type Conflict, readConflicts } from "./conflict.ts";
import type { Cursor } from "./cursor.ts";
import { ProtocolError } from "./errors.ts";
import { HASH_BYTES } from "./hash.ts";
import { readCursor } from "./read.ts";

/** `cursor_mismatch` refusing a push: where the server's acked cursor for this host stands. */
export function ackedOf(error: unknown): Cursor | null {
  if (!(error instanceof ProtocolError) || error.code !== "cursor_mismatch" || error.details.acked === undefined) {
    return null;
  }
  return readCursor(error.details.acked, "acked");
}

/** `missing_objects`: the hashes the server does not hold. */
export function missingOf(error: unknown): Uint8Array[] | null {
  if (!(error instanceof ProtocolError) || error.code !== "missing_objects") return null;
  const listed: unknown = error.details.missing;
  if (!Array.isArray(listed)) return null;
  return listed.filter((h): h is Uint8Array => h instanceof Uint8Array && h.byteLength === HASH_BYTES);
}

/** `conflict`: the paths another host changed since this one saw them. */
export function conflictsOf(error: unknown): Conflict[] | null {
  if (!(error instanceof ProtocolError) || error.code !== "conflict") return null;
  return readConflicts(error.details);
}

/**
 * `cursor_mismatch` without `acked`: the host's pull position is not in the
 * server's history (a changes request's `fromRevId`, or a push's
 * `pulledId`; PROTOCOL.md §4.6). Only a hello, which answers `resync`, and
 * a reconcile recover.
 */
export function isOtherHistory(error: unknown): boolean {
  return error instanceof ProtocolError && error.code === "cursor_mismatch" && error.details.acked === undefined;
}

/**
 * `rate_limited`: how long the server asks the caller to wait, in ms (over
 * HTTP also its Retry-After header), or null when it names no time and the
 * caller backs off as usual.
 */
export function retryAfterOf(error: unknown): number | null {
  if (!(error instanceof ProtocolError) || error.code !== "rate_limited") return null;
  const ms = error.details.retryAfterMs;
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/**
 * `rate_limited` on a socket because other sockets' unread answers hold the
 * server's share for answers (PROTOCOL.md §8.2): the request did not run,
 * and the same request over HTTP, whose answers stream with backpressure,
 * is not held by them.
 */
export function isHeldByOthers(error: unknown): boolean {
  return error instanceof ProtocolError && error.code === "rate_limited" && error.details.heldByOthers === true;
}

/** `unauthorized` for an expired token: the server's clock when it refused it (seconds since the epoch), if it says. */
export function serverTimeOf(error: unknown): number | null {
  if (!(error instanceof ProtocolError) || error.code !== "unauthorized") return null;
  const now = error.details.now;
  return typeof now === "number" && Number.isSafeInteger(now) ? now : null;
}

/** `unauthorized` for an expired token: when it expired (seconds since the epoch), if the server says. */
export function expiredAtOf(error: unknown): number | null {
  if (!(error instanceof ProtocolError) || error.code !== "unauthorized") return null;
  const exp = error.details.exp;
  return typeof exp === "number" ? exp : null;
}
