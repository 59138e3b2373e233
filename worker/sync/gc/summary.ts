/**
 * What the collector keeps in `meta` (two small rows, written at the start
 * and the end of a collection, so collecting never costs a write per slice):
 *
 * - `gc`: the last finished collection (stats, scheduling) and when the
 *   current one started, if one is running;
 * - `tombstones_dropped`: the newest rev whose tombstones may have been
 *   dropped (hello.ts answers `resync` to a pull cursor below it). Written
 *   in the same transaction as the deletes it covers.
 */
import type { Freed, LastCollection } from "../../../protocol/collection.ts";
import type { Cursor } from "../../../protocol/cursor.ts";
import type { Db } from "../db.ts";

export type { Freed, LastCollection };

export interface CollectorRecord {
  readonly last: LastCollection | null;
  /** Start time of a collection in progress (in memory: an evicted object starts it again). */
  readonly running: number | null;
  /**
   * Versions replaced at or before this rev may have been dropped (raised
   * when a run starts, before it drops any): the state at any rev from here
   * on is whole (worker/sync/snapshot.ts).
   */
  readonly historyCut?: number;
  /** When the last whole listing of the workspace's R2 prefix started (r2-orphans.ts): one runs once a pack grace. */
  readonly listedAt?: number;
}

export function emptyFreed(): Freed {
  return {
    objects: 0,
    objectBytes: 0,
    storedBytes: 0,
    packsDeleted: 0,
    packsRewritten: 0,
    packsCondemned: 0,
    packsRevived: 0,
    orphans: 0,
    r2Deleted: 0,
    versions: 0,
    tombstones: 0,
    rowsWritten: 0,
    rowsRead: 0,
    slices: 0,
  };
}

export function readCollectorRecord(db: Db): CollectorRecord {
  const row = db.exec<{ value: string }>(`SELECT value FROM meta WHERE key = 'gc'`).rows[0];
  return row ? (JSON.parse(row.value) as CollectorRecord) : { last: null, running: null };
}

export function writeCollectorRecord(db: Db, record: CollectorRecord): void {
  db.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('gc', ?)`, JSON.stringify(record));
}

/** The newest rev whose tombstones may be gone; 0 when none ever were. */
export function readTombstonesDropped(db: Db): number {
  const row = db.exec<{ value: number }>(`SELECT value FROM meta WHERE key = 'tombstones_dropped'`).rows[0];
  return row?.value ?? 0;
}

/**
 * Whether a pull resumed at `cursor` could miss a deletion whose tombstone
 * was dropped through rev `dropped` (hello answers `resync`, changes
 * `cursor_mismatch`). A cursor inside rev `dropped` counts: that rev's
 * tombstones after its path may be gone too.
 */
export function missesDroppedTombstones(cursor: Cursor, dropped: number): boolean {
  return cursor.rev < dropped || (cursor.rev === dropped && cursor.path !== null);
}

export function raiseTombstonesDropped(db: Db, rev: number): void {
  db.exec(
    `INSERT INTO meta (key, value) VALUES ('tombstones_dropped', ?1)
     ON CONFLICT (key) DO UPDATE SET value = max(value, ?1)`,
    rev,
  );
}
