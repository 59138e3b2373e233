/**
 * changes: the current state of every path changed after a cursor, in
 * (rev, path) order, one keyset page at a time on entries_by_rev, so a page
 * costs O(page) however much is pending.
 */
import type { Change, ChangesRequest, ChangesResponse } from "../../protocol/changes.ts";
import type { Cursor } from "../../protocol/cursor.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { hashesEqual } from "../../protocol/hash.ts";
import { LIMITS, MiB } from "../../protocol/limits.ts";
import type { Db, SyncContext } from "./db.ts";
import { ENTRY_COLUMNS, type EntryRow, rowToEntry, toChange } from "./entries.ts";
import { readTombstonesDropped } from "./gc/summary.ts";
import { readCurrentRev } from "./history.ts";
import { readEpoch } from "./meta.ts";

/** Encoded entries in one page stay near this; a page always carries at least one. */
export const MAX_PAGE_BYTES = 4 * MiB;
/**
 * Rows examined per page, skipped ones included, as a multiple of the page
 * size: a host that wrote most of the pending changes gets short (even
 * empty) pages with `more`, never a page that walks its whole history.
 */
export const SCAN_FACTOR = 4;

export function changes({ db }: SyncContext, req: ChangesRequest): ChangesResponse | ProtocolError {
  const epoch = readEpoch(db);
  const rev = readCurrentRev(db);
  if ((req.epoch && !hashesEqual(req.epoch, epoch)) || req.after.rev > rev) {
    // Another history, or a cursor ahead of this one (storage restored from a backup).
    return new ProtocolError("cursor_mismatch", "cursor is not in this workspace's history; resync", { epoch, rev });
  }
  if (req.after.rev > 0 && req.after.rev < readTombstonesDropped(db)) {
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
  const more = !atEnd && readRowsAfter(db, cursor, 1).length > 0;
  return { entries, next: more ? cursor : { rev, path: null }, more, rev };
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
