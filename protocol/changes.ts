/** changes: server changes after a cursor, one per path, in (rev, path) order, paged. */
import type { Cursor } from "./cursor.ts";
import { type Entry, entryFields, readEntry } from "./entry.ts";
import { ProtocolError } from "./errors.ts";
import { ID_BYTES, REV_ID_BYTES } from "./hello.ts";
import { assertUnreservedPath } from "./paths.ts";
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
  /** Set by the host's decoder, never sent: changes of the page it could not read (readAnswerChanges). */
  readonly unreadable?: readonly UnreadableChange[];
}

/** A change in an answer that no host may hold: its path as text a terminal shows safely, and why. */
export interface UnreadableChange {
  readonly path: string;
  readonly reason: string;
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
  const { entries, unreadable } = readAnswerChanges(m.entries);
  return {
    entries,
    next: readCursor(m.next, "next"),
    more: readBool(m.more, "more"),
    rev: readUint(m.rev, "rev"),
    ...(revId ? { revId } : {}),
    ...(unreadable.length > 0 ? { unreadable } : {}),
  };
}

/**
 * An answer's `entries` (changes, snapshot), as the host reads them. A
 * change no host may hold (a path outside the rules or reserved, an unknown kind, a
 * mode past 0o7777) is set aside with its reason, so the host refuses that
 * path alone and applies the rest, as it does a size or a symlink target
 * past the rules (PROTOCOL.md §9.3). An entry that is no map with a text
 * path cannot be named, and refuses the whole answer.
 */
export function readAnswerChanges(value: unknown): { entries: Change[]; unreadable: UnreadableChange[] } {
  const entries: Change[] = [];
  const unreadable: UnreadableChange[] = [];
  readArray(value, "entries", Number.MAX_SAFE_INTEGER).forEach((v, i) => {
    const field = `entries[${i}]`;
    try {
      const change = readChange(v, field);
      assertUnreservedPath(change.path);
      entries.push(change);
    } catch (e) {
      const path = (readMap(v, field) as { path?: unknown }).path;
      if (!(e instanceof ProtocolError) || typeof path !== "string") throw e;
      unreadable.push({ path: shownPath(path), reason: e.message });
    }
  });
  return { entries, unreadable };
}

/** `path` with control characters (NUL, escape sequences) written as \u escapes, for a report or a terminal. */
function shownPath(path: string): string {
  let shown = "";
  for (const c of path) {
    const code = c.charCodeAt(0);
    shown += code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, "0")}` : c;
  }
  return shown;
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
