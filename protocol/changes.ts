/** changes: server changes after a cursor, one per path, in (rev, path) order, paged. */
import type { Cursor } from "./cursor.ts";
import { type Entry, entryFields, readEntry } from "./entry.ts";
import { ID_BYTES } from "./hello.ts";
import { optional, readArray, readBool, readCursor, readFixedBytes, readMap, readUint } from "./read.ts";

/** A path's current state and the server rev that set it. */
export type Change = Entry & { readonly rev: number };

export interface ChangesRequest {
  /** The pulling host: its own changes are skipped (the cursor still passes them). */
  readonly hostId?: Uint8Array;
  /** When given and not the server's epoch, the answer is `cursor_mismatch`. */
  readonly epoch?: Uint8Array;
  readonly after: Cursor;
  /** At most this many entries; the server caps it at `maxPageEntries`. */
  readonly limit?: number;
}

export interface ChangesResponse {
  readonly entries: readonly Change[];
  /** Resume point: pass it as `after` for the next page; save it as the pull cursor. */
  readonly next: Cursor;
  /** True when changes remain after `next`. */
  readonly more: boolean;
  /** The server's current rev. */
  readonly rev: number;
}

export function decodeChangesRequest(value: unknown): ChangesRequest {
  const m = readMap(value, "changes");
  const hostId = optional(m.hostId, (v, f) => readFixedBytes(v, f, ID_BYTES), "hostId");
  const epoch = optional(m.epoch, (v, f) => readFixedBytes(v, f, ID_BYTES), "epoch");
  const limit = optional(m.limit, readUint, "limit");
  return {
    after: readCursor(m.after, "after"),
    ...(hostId ? { hostId } : {}),
    ...(epoch ? { epoch } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
}

export function decodeChangesResponse(value: unknown): ChangesResponse {
  const m = readMap(value, "changes");
  return {
    entries: readArray(m.entries, "entries", Number.MAX_SAFE_INTEGER).map((v, i) => readChange(v, `entries[${i}]`)),
    next: readCursor(m.next, "next"),
    more: readBool(m.more, "more"),
    rev: readUint(m.rev, "rev"),
  };
}

/** One change map (an entry with its rev). */
export function readChange(value: unknown, field: string): Change {
  const f = readMap(value, field);
  return { ...readEntry(f, field), rev: readUint(f.rev, `${field}.rev`) };
}

export function changeFields(c: Change): Record<string, unknown> {
  return { ...entryFields(c), rev: c.rev };
}
