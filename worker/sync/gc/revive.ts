/**
 * Condemned packs brought back (PROTOCOL.md §7.9). A pack in R2 that no
 * wanted index row is in is condemned, its rows kept for the pack grace, so
 * a push or an upload that names one of its chunks in that time still finds
 * it held: the collector's onWrite (worker/do/collector.ts) then makes the
 * pack live again, in that write's own transaction, before anything could
 * delete it. A run in progress also learns which packs a write named, and
 * condemns none of them (collect.ts).
 */
import type { Db } from "../db.ts";
import { hashWindows, WANTED_CTE } from "../hash-list.ts";

/** Whether any pack is condemned: one seek of the partial index `packs_condemned` (schema.ts). */
export function anyCondemned(db: Db): boolean {
  return db.exec(`SELECT 1 AS x FROM packs WHERE state = 'condemned' LIMIT 1`).rows.length > 0;
}

/** The ids of the packs in R2 that hold any of `hashes`. */
export function r2PacksHolding(db: Db, hashes: readonly Uint8Array[]): number[] {
  const out = new Set<number>();
  for (const w of hashWindows(hashes)) {
    const { rows } = db.exec<{ pack: number }>(
      `${WANTED_CTE} SELECT DISTINCT o.pack AS pack FROM wanted w CROSS JOIN objects o ON o.hash = w.hash
       JOIN packs p ON p.id = o.pack WHERE p.r2_key IS NOT NULL`,
      w.blob,
      w.count,
    );
    for (const r of rows) out.add(r.pack);
  }
  return [...out];
}

/** Makes the condemned packs among `ids` live again; returns how many were condemned. */
export function revivePacks(db: Db, ids: readonly number[]): number {
  if (ids.length === 0) return 0;
  return db.exec(
    `UPDATE packs SET state = 'live', condemned_at = NULL
     WHERE id IN (SELECT value FROM json_each(?)) AND state = 'condemned' RETURNING id`,
    JSON.stringify(ids),
  ).rows.length;
}

/** Condemns the live packs among `ids` at `at`; returns how many were live. */
export function condemnPacks(db: Db, ids: readonly number[], at: number): number {
  if (ids.length === 0) return 0;
  return db.exec(
    `UPDATE packs SET state = 'condemned', condemned_at = ?2
     WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'live' RETURNING id`,
    JSON.stringify(ids),
    at,
  ).rows.length;
}
