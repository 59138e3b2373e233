/** changes: server changes after a cursor, one per path, in (rev, path) order, paged. */
import type { Cursor } from "./cursor.ts";
import { type Entry, entryFields, readEntry } from "./entry.ts";
import { ID_BYTES, REV_ID_BYTES } from "./hello.ts";
import { optional, readArray, readBool, readCursor, readFixedBytes, readMap, readUint } from "./read.ts";

/**
 * A path's current state and the server rev that set it; when the request
 * asked for `history`, also the states the path had before on the server
 * (most recent first, distinct, at most MAX_PAST_STATES; `gone` among them
 * when the path was deleted and written again), so a reconciling host can
 * tell a stale local state from local work.
 */
export type Change = Entry & { readonly rev: number; readonly past?: readonly Entry[] };

/** Earlier states delivered per path at most (the most recent ones). */
export const MAX_PAST_STATES = 16;

export interface ChangesRequest {
  /** The pulling host: its own changes are skipped (the cursor still passes them). */
  readonly hostId?: Uint8Array;
  /** When given and not the server's epoch, the answer is `cursor_mismatch`. */
  readonly epoch?: Uint8Array;
  readonly after: Cursor;
  /** At most this many entries; the server caps it at `maxPageEntries`. */
  readonly limit?: number;
  /** Deliver each change's `past` states (a reconciling host asks for them). */
  readonly history?: boolean;
  /**
   * The identity the host holds for `after.rev` (its pull position's, or the
   * last page's `revId`): when given and not the server's, the answer is
   * `cursor_mismatch`, since the server's rev of that number is another one.
   */
  readonly revId?: Uint8Array;
  /** A look (status): the host applies nothing, so the server records no pull position for it. */
  readonly look?: boolean;
}

export interface ChangesResponse {
  readonly entries: readonly Change[];
  /** Resume point: pass it as `after` for the next page; save it as the pull cursor. */
  readonly next: Cursor;
  /** True when changes remain after `next`. */
  readonly more: boolean;
  /** The server's current rev. */
  readonly rev: number;
  /** The identity of `next.rev` (absent at rev 0): saved with the cursor, checked at hello. */
  readonly revId?: Uint8Array;
}

export function decodeChangesRequest(value: unknown): ChangesRequest {
  const m = readMap(value, "changes");
  const hostId = optional(m.hostId, (v, f) => readFixedBytes(v, f, ID_BYTES), "hostId");
  const epoch = optional(m.epoch, (v, f) => readFixedBytes(v, f, ID_BYTES), "epoch");
  const limit = optional(m.limit, readUint, "limit");
  const history = optional(m.history, readBool, "history");
  const revId = optional(m.revId, (v, f) => readFixedBytes(v, f, REV_ID_BYTES), "revId");
  const look = optional(m.look, readBool, "look");
  return {
    after: readCursor(m.after, "after"),
    ...(hostId ? { hostId } : {}),
    ...(epoch ? { epoch } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(history ? { history } : {}),
    ...(revId ? { revId } : {}),
    ...(look ? { look } : {}),
  };
}

export function decodeChangesResponse(value: unknown): ChangesResponse {
  const m = readMap(value, "changes");
  const revId = optional(m.revId, (v, f) => readFixedBytes(v, f, REV_ID_BYTES), "revId");
  return {
    entries: readArray(m.entries, "entries", Number.MAX_SAFE_INTEGER).map((v, i) => readChange(v, `entries[${i}]`)),
    next: readCursor(m.next, "next"),
    more: readBool(m.more, "more"),
    rev: readUint(m.rev, "rev"),
    ...(revId ? { revId } : {}),
  };
}

/** One change map (an entry with its rev). */
export function readChange(value: unknown, field: string): Change {
  const f = readMap(value, field);
  const change = { ...readEntry(f, field), rev: readUint(f.rev, `${field}.rev`) };
  if (f.past === undefined || f.past === null) return change;
  const past = readArray(f.past, `${field}.past`, MAX_PAST_STATES).map((v, i) =>
    readEntry(readMap(v, `${field}.past[${i}]`), `${field}.past[${i}]`),
  );
  return { ...change, past };
}

export function changeFields(c: Change): Record<string, unknown> {
  const fields = { ...entryFields(c), rev: c.rev };
  return c.past === undefined ? fields : { ...fields, past: c.past.map(entryFields) };
}
