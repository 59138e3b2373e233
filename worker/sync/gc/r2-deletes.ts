/**
 * Pack objects in R2 on their way out (PROTOCOL.md §7.9). The key of a pack
 * whose rows are gone (its index rows first, then its pack row, in one
 * transaction) or of an orphan the listing found (r2-orphans.ts) is queued
 * in `pack_deletes`; the collector deletes queued keys from R2 in batches of
 * the most one call takes, then marks them done. The queue is in storage:
 * an object evicted between the rows and the R2 delete finishes the delete
 * at its next run, and leaves nothing for the listing to find.
 *
 * A done key stays one pack grace more. An upload's pack is named by its
 * bytes and written create-only, so an upload whose put found the key
 * already in R2 cannot tell whether those bytes were deleted since: its
 * record is refused once (`keysToWaitFor`), and the host's retry puts the
 * bytes anew (worker/sync/r2-record.ts).
 */
import type { Db } from "../db.ts";
import type { PackStore } from "../pack-store.ts";

/** Keys one R2 delete call takes (R2Bucket.delete: at most 1,000). */
export const R2_DELETE_BATCH = 1000;

/** Queues `keys` for deletion from R2 (again, if one was deleted before and written since). */
export function queueDeletes(db: Db, keys: readonly string[], at: number): void {
  if (keys.length === 0) return;
  db.exec(
    `INSERT INTO pack_deletes (key, queued_at, deleted_at) SELECT value, ?2, NULL FROM json_each(?1) WHERE true
     ON CONFLICT (key) DO UPDATE SET queued_at = excluded.queued_at, deleted_at = NULL`,
    JSON.stringify(keys),
    at,
  );
}

/**
 * Deletes one batch of queued keys from R2, then marks them done at `at`
 * (`abandoned`: the workspace was deleted meanwhile, leave its tables
 * alone). Returns how many it deleted; 0 when the queue is empty.
 */
export async function deleteQueued(db: Db, store: PackStore, at: number, abandoned: () => boolean): Promise<number> {
  const keys = db
    .exec<{ key: string }>(`SELECT key FROM pack_deletes WHERE deleted_at IS NULL LIMIT ?`, R2_DELETE_BATCH)
    .rows.map((r) => r.key);
  if (keys.length === 0) return 0;
  await store.deletePacks(keys);
  if (abandoned()) return keys.length;
  db.exec(
    `UPDATE pack_deletes SET deleted_at = ?2 WHERE key IN (SELECT value FROM json_each(?1)) AND deleted_at IS NULL`,
    JSON.stringify(keys),
    at,
  );
  return keys.length;
}

/**
 * Forgets keys deleted before `before` (one pack grace ago), and orphans
 * first seen two graces before it that no listing has seen since (deleted
 * behind ferry's back): one still there is seen again, never deleted sooner.
 */
export function pruneDeleted(db: Db, before: number, graceMs: number): void {
  db.exec(`DELETE FROM pack_deletes WHERE deleted_at < ?`, before);
  db.exec(`DELETE FROM orphans_seen WHERE seen_at < ?`, before - 2 * graceMs);
}

/**
 * The keys among `keys` an upload's record must not name yet (run in its
 * own transaction before the record's): those queued for deletion, whose
 * bytes R2 may drop at any moment, and those deleted within the pack grace,
 * since the upload's put may have found the old bytes there before the
 * delete (a put of existing bytes is a no-op). A deleted key is forgotten as
 * it is refused: the host's retry then puts after the delete, so whatever it
 * finds under the key was written since, and is recorded.
 */
export function keysToWaitFor(db: Db, keys: readonly string[]): string[] {
  if (keys.length === 0) return [];
  const json = JSON.stringify(keys);
  const rows = db.exec<{ key: string }>(
    `SELECT key FROM pack_deletes WHERE key IN (SELECT value FROM json_each(?))`,
    json,
  ).rows;
  if (rows.length > 0) {
    db.exec(`DELETE FROM pack_deletes WHERE key IN (SELECT value FROM json_each(?)) AND deleted_at IS NOT NULL`, json);
  }
  return rows.map((r) => r.key);
}

/** Whether `key` is queued for deletion; a key deleted before is forgotten (the caller wrote it since). */
export function queuedForDeletion(db: Db, key: string): boolean {
  const row = db.exec<{ deleted_at: number | null }>(`SELECT deleted_at FROM pack_deletes WHERE key = ?`, key).rows[0];
  if (row !== undefined && row.deleted_at !== null) db.exec(`DELETE FROM pack_deletes WHERE key = ?`, key);
  return row !== undefined && row.deleted_at === null;
}
