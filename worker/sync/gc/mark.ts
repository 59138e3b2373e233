/**
 * The collector's mark phases, one slice each call: walk `entries` then
 * `versions` in key order, mark the objects every live file and retained
 * version names, and drop tombstones past the horizon and versions past the
 * history window. Entries are walked before versions: a state overwritten
 * before the entry walk reached its path is in `versions` by the time the
 * version walk starts; a state written after the run started was marked by
 * the push that wrote it (collect.ts, `referenced`). Long chunk lists are
 * read one at a time (entries.ts): a slice of 2,000 rows of 2 MB lists
 * would not fit in the object.
 */
import type { Db } from "../db.ts";
import { type BoundedChunksRow, boundedChunks, jsonWindows, withChunkList } from "../entries.ts";
import type { HashMarks } from "./marks.ts";
import { raiseTombstonesDropped } from "./summary.ts";

export interface MarkSlice {
  /** Where the walk stopped; null when it reached the end. */
  readonly next: string | null;
  readonly dropped: number;
  /** The oldest rev still kept by this walk (a tombstone's rev, a version's until_rev), for scheduling. */
  readonly oldestKept: number | null;
}

/**
 * Up to `limit` entries after `after` (a path; null from the start): marks
 * the chunks of live files and drops tombstones at or below `horizonCut`,
 * raising `tombstones_dropped` in the same transaction.
 */
export function markEntries(
  db: Db,
  marks: HashMarks,
  after: string | null,
  limit: number,
  horizonCut: number,
): MarkSlice {
  const { rows } = db.exec<BoundedChunksRow & { kind: string }>(
    `SELECT path, rev, kind, ${boundedChunks()} FROM entries WHERE path > ?1 ORDER BY path LIMIT ?2`,
    after ?? "",
    limit,
  );
  const drop: string[] = [];
  let newestDropped = 0;
  let oldestKept: number | null = null;
  for (const row of rows) {
    if (row.kind === "file") marks.addChunkList(withChunkList(db, row, "entries").chunks);
    else if (row.kind === "gone") {
      if (row.rev <= horizonCut) {
        drop.push(row.path);
        newestDropped = Math.max(newestDropped, row.rev);
      } else oldestKept = Math.min(oldestKept ?? row.rev, row.rev);
    }
  }
  if (drop.length > 0) {
    raiseTombstonesDropped(db, newestDropped);
    for (const json of jsonWindows(drop)) {
      db.exec(
        `DELETE FROM entries WHERE path IN (SELECT value FROM json_each(?1)) AND kind = 'gone' AND rev <= ?2`,
        json,
        horizonCut,
      );
    }
  }
  // The empty path is never stored (PROTOCOL.md §3.1), so "" starts before every path.
  const last = rows.at(-1);
  return { next: rows.length < limit || !last ? null : last.path, dropped: drop.length, oldestKept };
}

/** A position in `versions` (primary key path, rev). */
export interface VersionKey {
  readonly path: string;
  readonly rev: number;
}

/**
 * Up to `limit` versions after `after`: drops those replaced at or below
 * `historyCut` and marks the chunks of the rest.
 */
export function markVersions(
  db: Db,
  marks: HashMarks,
  after: VersionKey | null,
  limit: number,
  historyCut: number,
): MarkSlice & { readonly nextKey: VersionKey | null } {
  const { rows } = db.exec<BoundedChunksRow & { until_rev: number }>(
    `SELECT path, rev, until_rev, ${boundedChunks()} FROM versions WHERE (path, rev) > (?1, ?2) ORDER BY path, rev LIMIT ?3`,
    after?.path ?? "",
    after?.rev ?? -1,
    limit,
  );
  const drop: [string, number][] = [];
  let oldestKept: number | null = null;
  for (const row of rows) {
    if (row.until_rev <= historyCut) drop.push([row.path, row.rev]);
    else {
      marks.addChunkList(withChunkList(db, row, "versions").chunks);
      oldestKept = Math.min(oldestKept ?? row.until_rev, row.until_rev);
    }
  }
  if (drop.length > 0) {
    for (const json of jsonWindows(drop)) {
      db.exec(
        `DELETE FROM versions WHERE (path, rev) IN (SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?1) j)`,
        json,
      );
    }
  }
  const last = rows.at(-1);
  const nextKey = rows.length < limit || !last ? null : { path: last.path, rev: last.rev };
  return { next: nextKey?.path ?? null, nextKey, dropped: drop.length, oldestKept };
}
