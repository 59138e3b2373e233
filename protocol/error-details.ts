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
