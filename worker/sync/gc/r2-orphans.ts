/**
 * Orphans in R2 (PROTOCOL.md §7.9): objects under the workspace's prefix
 * that no pack row names and no deletion is queued for. An upload writes its
 * packs before the object records them (bytes, then index), so an orphan
 * younger than the pack grace may be an upload whose rows are not recorded
 * yet, and is kept; an older one is a write whose record never came (a
 * Worker stopped between the two) and is queued for deletion
 * (r2-deletes.ts). The collector lists the prefix a page a step, at most
 * once a pack grace (collect.ts).
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
 * One page of the listing after `cursor`: queues the orphans uploaded before
 * `uploadedBefore` (a pack grace ago). `abandoned`: the workspace was
 * deleted while R2 answered.
 */
export async function listOrphans(
  db: Db,
  store: PackStore,
  cursor: string | null,
  uploadedBefore: number,
  now: number,
  abandoned: () => boolean,
): Promise<OrphanPage> {
  const page = await store.listPacks(cursor);
  if (abandoned()) return { next: null, queued: 0 };
  const old = page.packs.filter((p) => p.uploaded < uploadedBefore).map((p) => p.key);
  const queued = db.transaction(() => {
    if (old.length === 0) return 0;
    const orphans = db
      .exec<{ key: string }>(
        `SELECT j.value AS key FROM json_each(?) j
         WHERE NOT EXISTS (SELECT 1 FROM packs p WHERE p.r2_key = j.value)
           AND NOT EXISTS (SELECT 1 FROM pack_deletes d WHERE d.key = j.value AND d.deleted_at IS NULL)`,
        JSON.stringify(old),
      )
      .rows.map((r) => r.key);
    queueDeletes(db, orphans, now);
    return orphans.length;
  });
  return { next: page.cursor, queued };
}
