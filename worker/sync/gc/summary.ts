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
import type { Db } from "../db.ts";

/** What one collection did; every count is of things deleted or rewritten. */
export interface Freed {
  objects: number;
  /** Bytes of the objects deleted. */
  objectBytes: number;
  /** Bytes of storage released: packs deleted or rewritten smaller, and inline objects deleted. */
  storedBytes: number;
  packsDeleted: number;
  packsRewritten: number;
  versions: number;
  tombstones: number;
  /** Rows the collection wrote (deletes and rewrites are billed as writes) and read. */
  rowsWritten: number;
  rowsRead: number;
  slices: number;
}

export interface LastCollection {
  readonly startedAt: number;
  readonly endedAt: number;
  /** The workspace's rev and newest pack when it started: a later write makes the next one due. */
  readonly rev: number;
  readonly lastPack: number;
  /** When something it kept expires (a version, a tombstone, an upload's grace); null when nothing will. */
  readonly nextDueAt: number | null;
  readonly freed: Freed;
}

export interface CollectorRecord {
  readonly last: LastCollection | null;
  /** Start time of a collection in progress (in memory: an evicted object starts it again). */
  readonly running: number | null;
}

export function emptyFreed(): Freed {
  return {
    objects: 0,
    objectBytes: 0,
    storedBytes: 0,
    packsDeleted: 0,
    packsRewritten: 0,
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

export function raiseTombstonesDropped(db: Db, rev: number): void {
  db.exec(
    `INSERT INTO meta (key, value) VALUES ('tombstones_dropped', ?1)
     ON CONFLICT (key) DO UPDATE SET value = max(value, ?1)`,
    rev,
  );
}
