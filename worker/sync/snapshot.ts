/**
 * snapshot (PROTOCOL.md §4.8): a path and its subtree as they were at a
 * rev, in path order, paged. A path's state at rev N is its entry when the
 * entry was written at or before N (nothing replaced it since), else the
 * version with rev <= N < until_rev; neither means it did not exist at N.
 * `ferry restore` writes what this answers back to disk.
 */
import type { Change } from "../../protocol/changes.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { MAX_HISTORY_PAGE, type SnapshotRequest, type SnapshotResponse } from "../../protocol/history.ts";
import { subtreeRange } from "../../protocol/paths.ts";
import { MAX_PAGE_BYTES } from "./changes.ts";
import type { SyncContext } from "./db.ts";
import { BULK_ENTRY_COLUMNS, type BulkEntryRow, encodedSize, rowToEntry, toChange, withChunkList } from "./entries.ts";
import { readCollectorRecord } from "./gc/summary.ts";
import { readCurrentRev } from "./history.ts";

const DEFAULT_PAGE = 1000;

export function snapshot({ db }: SyncContext, req: SnapshotRequest): SnapshotResponse | ProtocolError {
  const current = readCurrentRev(db);
  if (req.rev > current) {
    return new ProtocolError("bad_request", `rev ${req.rev} is after the current rev ${current}`, { field: "rev" });
  }
  const retainedFrom = readCollectorRecord(db).historyCut ?? 0;
  if (req.rev < retainedFrom) {
    return new ProtocolError(
      "history_expired",
      `rev ${req.rev} is older than the history kept: the oldest rev that can be restored is ${retainedFrom}`,
      { retainedFrom },
    );
  }
  const limit = Math.max(1, Math.min(req.limit ?? DEFAULT_PAGE, MAX_HISTORY_PAGE));
  // The whole workspace is every path; a path is itself and [path/, path0).
  const range = req.path === undefined ? { from: "", to: null } : subtreeRange(req.path);
  // Long chunk lists are left out of the read (entries.ts) and read one by one for the rows the page takes.
  const rows = db.exec<SnapshotRow>(
    `SELECT * FROM (
       SELECT ${BULK_ENTRY_COLUMNS}, 'entries' AS source FROM entries
       WHERE (path = ?1 OR (path >= ?2 AND (?3 IS NULL OR path < ?3))) AND path > ?4 AND rev <= ?5 AND kind != 'gone'
       UNION ALL
       SELECT ${BULK_ENTRY_COLUMNS}, 'versions' AS source FROM versions
       WHERE (path = ?1 OR (path >= ?2 AND (?3 IS NULL OR path < ?3))) AND path > ?4 AND rev <= ?5 AND until_rev > ?5)
     ORDER BY path LIMIT ?6`,
    req.path ?? "",
    range.from,
    range.to,
    req.after ?? "",
    req.rev,
    limit + 1,
  ).rows;
  const entries: Change[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, limit)) {
    bytes += encodedSize(row);
    // A page is bounded by bytes as changes' is, and always carries one entry.
    if (entries.length > 0 && bytes > MAX_PAGE_BYTES) break;
    entries.push(toChange(rowToEntry(withChunkList(db, row, row.source))));
  }
  const last = entries.at(-1);
  return { entries, ...(rows.length > entries.length && last ? { next: last.path } : {}) };
}

type SnapshotRow = BulkEntryRow & { source: "entries" | "versions" };
