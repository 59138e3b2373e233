/**
 * `DELETE /v1/workspaces/{ws}` with a bucket bound: after the object wiped
 * its rows (worker/do/admin.ts), every pack under the workspace's prefix
 * goes too, listed and deleted a thousand keys at a time (R2's most per
 * delete call).
 */
import { historyPrefix, packPrefix } from "./bucket-store.ts";

/**
 * Deletes every pack of `workspace` but those under the prefix of `kept`,
 * the new, empty history the deletion began (bucket-store.ts): a pack an
 * upload of the new history writes is under it. An upload racing the
 * deletion wrote under the old one's, and is refused when it records
 * (worker/sync/r2-record.ts), deleting what it wrote if this listing came
 * too early to; one whose Worker stopped before it recorded is an orphan
 * the collection's listing of the prefix deletes (§7.9).
 */
export async function deletePacks(bucket: R2Bucket, workspace: string, kept: string): Promise<number> {
  const keep = historyPrefix(workspace, kept);
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: packPrefix(workspace), limit: 1000, ...(cursor ? { cursor } : {}) });
    const keys = page.objects.filter((o) => !o.key.startsWith(keep)).map((o) => o.key);
    if (keys.length > 0) await bucket.delete(keys);
    deleted += keys.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor !== undefined);
  return deleted;
}
