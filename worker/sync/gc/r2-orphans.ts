/**
 * Orphans in R2 (PROTOCOL.md §7.9): objects under the workspace's prefix
 * that no pack row names and no deletion is queued for. An upload writes its
 * packs before the object records them (bytes, then index), so an orphan may
 * be an upload whose rows are not recorded yet. Each listing notes the
 * orphans it finds, on the object's own clock (R2's upload times come from
 * another clock); one still unnamed a pack grace after it was first seen is
 * a write whose record never came (a Worker stopped between the two), and
 * is queued for deletion (r2-deletes.ts). The collector lists the prefix a
 * page a step, at most once a pack grace (collect.ts).
 */
import type { Db } from "../db.ts";
import type { PackStore } from "../pack-store.ts";
import { queueDeletes } from "./r2-deletes.ts";

export interface OrphanPage {
  /** Where the next page starts; null when the listing is done. */
  readonly next: string | null;
  readonly queued: number;
}

/**
 * One page of the listing after `cursor`: notes the orphans first seen now,
 * queues those first seen at or before `seenBefore` (a pack grace ago).
 * `abandoned`: the workspace was deleted while R2 answered.
 */
export async function listOrphans(
  db: Db,
  store: PackStore,
  cursor: string | null,
  seenBefore: number,
  now: number,
  abandoned: () => boolean,
): Promise<OrphanPage> {
  const page = await store.listPacks(cursor);
  if (abandoned() || page.keys.length === 0) return { next: abandoned() ? null : page.cursor, queued: 0 };
  const json = JSON.stringify(page.keys);
  const queued = db.transaction(() => {
    // A key recorded since it was first seen was an upload in flight: forgotten.
    db.exec(
      `DELETE FROM orphans_seen WHERE key IN (SELECT j.value FROM json_each(?) j JOIN packs p ON p.r2_key = j.value)`,
      json,
    );
    const orphans = db.exec<{ key: string; seen: number | null }>(
      `SELECT j.value AS key, s.seen_at AS seen FROM json_each(?) j LEFT JOIN orphans_seen s ON s.key = j.value
       WHERE NOT EXISTS (SELECT 1 FROM packs p WHERE p.r2_key = j.value)
         AND NOT EXISTS (SELECT 1 FROM pack_deletes d WHERE d.key = j.value AND d.deleted_at IS NULL)`,
      json,
    ).rows;
    const due = orphans.filter((o) => o.seen !== null && o.seen <= seenBefore).map((o) => o.key);
    const first = orphans.filter((o) => o.seen === null).map((o) => o.key);
    if (first.length > 0) {
      db.exec(
        `INSERT INTO orphans_seen (key, seen_at) SELECT value, ?2 FROM json_each(?1)`,
        JSON.stringify(first),
        now,
      );
    }
    if (due.length > 0) {
      db.exec(`DELETE FROM orphans_seen WHERE key IN (SELECT value FROM json_each(?))`, JSON.stringify(due));
    }
    queueDeletes(db, due, now);
    return due.length;
  });
  return { next: page.cursor, queued };
}
