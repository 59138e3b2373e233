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
import { BULK_ENTRY_COLUMNS, type BulkEntryRow, encodedSize, rowToEntry, toChange, withChunkList } from "./entries.ts";
import { readTombstonesDropped } from "./gc/summary.ts";
import { readHead, readRevId } from "./history.ts";
import { recordPulled } from "./hosts.ts";
import { withPastStates } from "./past-states.ts";
import { positionLost } from "./position.ts";

/** Encoded entries in one page stay near this; a page always carries at least one. */
export const MAX_PAGE_BYTES = 4 * MiB;
/**
 * Rows examined per page, skipped ones included, as a multiple of the page
 * size: a host that wrote most of the pending changes gets short (even
 * empty) pages with `more`, never a page that walks its whole history.
 */
export const SCAN_FACTOR = 4;

const LOST_MESSAGE = {
  "other-history": "cursor is not in this workspace's history",
  "other-rev": "cursor's rev is not this history's",
  "past-horizon": "cursor is older than the tombstone horizon",
} as const;

export function changes({ db, readOnly }: SyncContext, req: ChangesRequest): ChangesResponse | ProtocolError {
  const { epoch, rev, revId: headId } = readHead(db);
  const position = {
    ...(req.epoch ? { epoch: req.epoch } : {}),
    cursor: req.after,
    ...(req.revId ? { revId: req.revId } : {}),
  };
  const lost = positionLost(db, position, { epoch, rev, dropped: readTombstonesDropped(db) }, "when-sent");
  // Past the horizon, a pull from the origin is still whole: it is how a host that resyncs reads every live path.
  if (lost !== null && !(lost === "past-horizon" && req.after.rev === 0)) {
    return new ProtocolError("cursor_mismatch", `${LOST_MESSAGE[lost]}; resync`, { epoch, rev });
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
      entries.push(toChange(rowToEntry(withChunkList(db, row, "entries"))));
      bytes += size;
    }
    if (!full && rows.length < want) atEnd = true;
    if (atEnd) break;
  }
  let more = !atEnd && readRowsAfter(db, cursor, 1).length > 0;
  let page = entries;
  if (req.history) {
    // Earlier states count toward the page's bytes: a page that outgrows them ends early.
    page = withPastStates(db, entries, MAX_PAGE_BYTES);
    if (page.length < entries.length) {
      const last = page[page.length - 1] as Change;
      cursor = { rev: last.rev, path: last.path };
      more = true;
    }
  }
  const next = more ? cursor : { rev, path: null };
  // The last page: the host now holds every change through `rev` (stats' `pulled`). A reader, or a look, records nothing.
  if (!more && req.hostId !== undefined && !readOnly && req.look !== true) recordPulled(db, req.hostId, rev);
  const revId = next.rev === rev ? headId : readRevId(db, next.rev);
  return { entries: page, next, more, rev, ...(revId ? { revId } : {}) };
}

/** Long chunk lists are left out (entries.ts, INLINE_CHUNK_BYTES) and read only for the rows a page takes. */
function readRowsAfter(db: Db, after: Cursor, limit: number): BulkEntryRow[] {
  return after.path === null
    ? db.exec<BulkEntryRow>(
        `SELECT ${BULK_ENTRY_COLUMNS} FROM entries WHERE rev > ? ORDER BY rev, path LIMIT ?`,
        after.rev,
        limit,
      ).rows
    : db.exec<BulkEntryRow>(
        `SELECT ${BULK_ENTRY_COLUMNS} FROM entries WHERE (rev, path) > (?, ?) ORDER BY rev, path LIMIT ?`,
        after.rev,
        after.path,
        limit,
      ).rows;
}
