/**
 * The collector's pack phase, after the sweep, one slice each call: each
 * pack written before the run is judged by the bytes the sweep kept in it.
 *
 * - A pack in SQLite with nothing kept is deleted (its rows are gone, and
 *   nothing outside the object reads it); one less than COMPACT_BELOW live is
 *   rewritten (compact.ts), and with a bucket taking uploads every one is,
 *   a budget a run, so old SQLite packs move to R2 over time.
 * - A pack in R2 goes live → condemned → deleted (PROTOCOL.md §7.9): with
 *   nothing kept it is condemned, rows and bytes kept for the pack grace,
 *   in which a write naming one of its chunks revives it (revive.ts); once
 *   condemned longer than the grace, with nothing kept (the sweep deleted its
 *   rows), its row goes and its key is queued for deletion from R2
 *   (r2-deletes.ts), index rows before R2 objects. One less than
 *   COMPACT_BELOW live is rewritten, the new pack named before it is condemned.
 * - A pack a write named during the run (`touched`) is left as it is: the
 *   sweep may have judged it before the write, and a condemned pack is
 *   revived by the write itself.
 */
import type { Db } from "../db.ts";
import { COMPACT_BELOW } from "./compact.ts";
import { queueDeletes } from "./r2-deletes.ts";
import { condemnPacks } from "./revive.ts";

/** Bytes of live SQLite packs one run moves to R2 when a bucket takes uploads. */
export const MOVE_TO_R2_BYTES = 64 * 1024 * 1024;

export interface PackSlice {
  readonly next: number | null;
  /** Pack rows deleted: SQLite packs with nothing live, R2 packs past their grace. */
  readonly deleted: number;
  /** Bytes of SQLite packs deleted: the object's storage freed. */
  readonly deletedBytes: number;
  readonly condemned: number;
}

export interface PackJudging {
  readonly lastPack: number;
  /** Bytes the sweep kept, by pack. */
  readonly live: ReadonlyMap<number, number>;
  /** Packs to rewrite, by id, with their size: filled here. */
  readonly sparse: Map<number, number>;
  readonly touched: ReadonlySet<number>;
  /** Condemned at or before this, a pack's grace is over. */
  readonly condemnedBefore: number;
  readonly now: number;
  /** Whether rewrites go to R2 (a bucket takes uploads); else R2 packs are not rewritten. */
  readonly toR2: boolean;
  /** SQLite pack bytes this run may still move to R2: spent here. */
  readonly move: { budget: number };
}

/** Up to `limit` packs after id `after`, up to the run's last pack. */
export function classifyPacks(db: Db, after: number, limit: number, j: PackJudging): PackSlice {
  const { rows } = db.exec<{ id: number; size: number; key: string | null; condemned: number | null }>(
    `SELECT id, size, r2_key AS key, condemned_at AS condemned FROM packs WHERE id > ?1 AND id <= ?2 ORDER BY id LIMIT ?3`,
    after,
    j.lastPack,
    limit,
  );
  const dead: number[] = [];
  const condemn: number[] = [];
  const dropped: string[] = [];
  let deletedBytes = 0;
  for (const { id, size, key, condemned } of rows) {
    const held = j.live.get(id) ?? 0;
    if (key === null) {
      if (held === 0) {
        dead.push(id);
        deletedBytes += size;
      } else if (held < size * COMPACT_BELOW) j.sparse.set(id, size);
      else if (j.toR2 && j.move.budget > 0) {
        j.sparse.set(id, size);
        j.move.budget -= size;
      }
      continue;
    }
    if (j.touched.has(id)) continue;
    if (condemned !== null) {
      if (condemned <= j.condemnedBefore && held === 0) {
        dead.push(id);
        dropped.push(key);
      }
    } else if (held === 0) condemn.push(id);
    else if (j.toR2 && held < size * COMPACT_BELOW) j.sparse.set(id, size);
  }
  if (dead.length > 0) db.exec(`DELETE FROM packs WHERE id IN (SELECT value FROM json_each(?))`, JSON.stringify(dead));
  queueDeletes(db, dropped, j.now);
  const condemnedNow = condemnPacks(db, condemn, j.now);
  const last = rows.at(-1);
  return {
    next: rows.length < limit || !last ? null : last.id,
    deleted: dead.length,
    deletedBytes,
    condemned: condemnedNow,
  };
}
