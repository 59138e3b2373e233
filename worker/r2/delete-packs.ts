/**
 * `DELETE /v1/workspaces/{ws}` with a bucket bound: after the object wiped
 * its rows (worker/do/admin.ts), every pack under the workspace's prefix
 * goes too, listed and deleted a thousand keys at a time (R2's most per
 * delete call).
 */
import { packPrefix } from "./bucket-store.ts";

/**
 * Deletes the workspace's packs written before `before`, the moment the
 * deletion began: a pack an upload of the new, empty history writes after
 * it is that history's. An upload racing the deletion (its pack written
 * before, recorded after) loses its pack: `workspace check` names it, and
 * the host uploads it again when a push is refused for it.
 */
export async function deletePacks(bucket: R2Bucket, workspace: string, before: Date): Promise<number> {
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: packPrefix(workspace), limit: 1000, ...(cursor ? { cursor } : {}) });
    const keys = page.objects.filter((o) => o.uploaded <= before).map((o) => o.key);
    if (keys.length > 0) await bucket.delete(keys);
    deleted += keys.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor !== undefined);
  return deleted;
}
