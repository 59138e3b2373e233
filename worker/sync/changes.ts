/**
 * changes: the current state of every path changed after a cursor, in
 * (rev, path) order, one keyset page at a time on entries_by_rev, so a page
 * costs O(page) however much is pending.
 */
import type { Change, ChangesRequest, ChangesResponse } from "../../protocol/changes.ts";
import type { Cursor } from "../../protocol/cursor.ts";
import type { Entry } from "../../protocol/entry.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { hashesEqual } from "../../protocol/hash.ts";
import { LIMITS, MiB } from "../../protocol/limits.ts";
import type { Db, SyncContext } from "./db.ts";
import { ENTRY_COLUMNS, type EntryRow, rowToEntry, toChange } from "./entries.ts";
import { missesDroppedTombstones, readTombstonesDropped } from "./gc/summary.ts";
import { readHead, readRevId, revIdMatches } from "./history.ts";
import { withPastStates } from "./past-states.ts";

/** Encoded entries in one page stay near this; a page always carries at least one. */
export const MAX_PAGE_BYTES = 4 * MiB;
/**
 * Rows examined per page, skipped ones included, as a multiple of the page
 * size: a host that wrote most of the pending changes gets short (even
 * empty) pages with `more`, never a page that walks its whole history.
 */
export const SCAN_FACTOR = 4;

export function changes({ db }: SyncContext, req: ChangesRequest): ChangesResponse | ProtocolError {
  const { epoch, rev, revId: headId } = readHead(db);
  if ((req.epoch && !hashesEqual(req.epoch, epoch)) || req.after.rev > rev) {
    // Another history, or a cursor ahead of this one (storage restored from a backup).
    return new ProtocolError("cursor_mismatch", "cursor is not in this workspace's history; resync", { epoch, rev });
  }
  if (req.revId !== undefined && !revIdMatches(db, req.after.rev, req.revId)) {
    // The same rev number names another rev here: restored from an older copy that then moved on.
    return new ProtocolError("cursor_mismatch", "cursor's rev is not this history's; resync", { epoch, rev });
  }
  if (req.after.rev > 0 && missesDroppedTombstones(req.after, readTombstonesDropped(db))) {
    // Deletions after this cursor may be gone (the tombstone horizon): only a whole pull from the origin is whole.
    return new ProtocolError("cursor_mismatch", "cursor is older than the tombstone horizon; resync", { epoch, rev });
  }
  const limit = Math.max(1, Math.min(req.limit ?? LIMITS.maxPageEntries, LIMITS.maxPageEntries));
  const maxScan = SCAN_FACTOR * limit;
  const entries: Change[] = [];
  let cursor = req.after;
  let scanned = 0;
  let bytes = 0;
  let atEnd = false;
  let full = false;
  while (!full && entries.length < limit && scanned < maxScan) {
    const want = Math.min(limit - entries.length, maxScan - scanned);
    const rows = readRowsAfter(db, cursor, want);
    for (const row of rows) {
      const own = req.hostId !== undefined && hashesEqual(row.origin, req.hostId);
      const size = own ? 0 : encodedSize(row);
      if (entries.length > 0 && bytes + size > MAX_PAGE_BYTES) {
        full = true;
        break;
      }
      scanned++;
      cursor = { rev: row.rev, path: row.path };
      if (own) continue;
      entries.push(toChange(rowToEntry(row)));
      bytes += size;
    }
    if (!full && rows.length < want) atEnd = true;
    if (atEnd) break;
  }
  let more = !atEnd && readRowsAfter(db, cursor, 1).length > 0;
  let page = entries;
  if (req.history) {
    page = withPastStates(db, entries);
    // Earlier states count toward the page's bytes: a page that outgrows them ends early.
    const kept = fitPage(page);
    if (kept < page.length) {
      page = page.slice(0, kept);
      const last = page[kept - 1] as Change;
      cursor = { rev: last.rev, path: last.path };
      more = true;
    }
  }
  const next = more ? cursor : { rev, path: null };
  const revId = next.rev === rev ? headId : readRevId(db, next.rev);
  return { entries: page, next, more, rev, ...(revId ? { revId } : {}) };
}

/** How many of `page`'s changes, with their past states, fit MAX_PAGE_BYTES (at least one). */
function fitPage(page: readonly Change[]): number {
  let bytes = 0;
  for (let i = 0; i < page.length; i++) {
    const c = page[i] as Change;
    bytes += [c, ...(c.past ?? [])].reduce((n, e) => n + entrySize(e), 0);
    if (bytes > MAX_PAGE_BYTES && i > 0) return i;
  }
  return page.length;
}

function entrySize(e: Entry): number {
  const chunks = e.kind === "file" ? e.chunks.length * 35 : 0;
  return 96 + e.path.length * 3 + chunks + (e.kind === "symlink" ? e.target.length * 3 : 0);
}

function readRowsAfter(db: Db, after: Cursor, limit: number): EntryRow[] {
  return after.path === null
    ? db.exec<EntryRow>(
        `SELECT ${ENTRY_COLUMNS} FROM entries WHERE rev > ? ORDER BY rev, path LIMIT ?`,
        after.rev,
        limit,
      ).rows
    : db.exec<EntryRow>(
        `SELECT ${ENTRY_COLUMNS} FROM entries WHERE (rev, path) > (?, ?) ORDER BY rev, path LIMIT ?`,
        after.rev,
        after.path,
        limit,
      ).rows;
}

/** An upper bound on the entry's CBOR size: text at 3 bytes a UTF-16 unit, and fixed overhead. */
function encodedSize(row: EntryRow): number {
  return 96 + row.path.length * 3 + (row.chunks?.byteLength ?? 0) * 1.1 + (row.target?.length ?? 0) * 3;
}
