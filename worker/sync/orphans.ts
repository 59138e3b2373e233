/**
 * A `gone` means nothing is left at or under its path. A path can have live
 * descendants without a live entry of its own: its children were pushed
 * alone (a child may arrive before its directory), or were written after
 * the directory's tombstone. Such a `gone` repeats no stored state, yet
 * it changes the tree: apply.ts counts it as a change, so the subtree is
 * tombstoned with it and a delete never leaves orphans behind.
 */
import type { PushEntry } from "../../protocol/push.ts";
import type { Db } from "./db.ts";
import { jsonWindows, type StoredEntry } from "./entries.ts";

/**
 * The paths of `gone` entries whose stored state is absent or a tombstone
 * and that have at least one live path under them. One statement per window
 * of such paths, each an EXISTS over the path primary key's range [p/, p0).
 */
export function goneOverLiveDescendants(
  db: Db,
  entries: readonly PushEntry[],
  stored: ReadonlyMap<string, StoredEntry>,
): Set<string> {
  const candidates = entries.filter((e) => e.kind === "gone" && (stored.get(e.path)?.kind ?? "gone") === "gone");
  const out = new Set<string>();
  for (const json of jsonWindows(candidates.map((e) => e.path))) {
    const { rows } = db.exec<{ path: string }>(
      `SELECT j.value AS path FROM json_each(?) j
       WHERE EXISTS (SELECT 1 FROM entries e
         WHERE e.path >= j.value || '/' AND e.path < j.value || '0' AND e.kind != 'gone')`,
      json,
    );
    for (const row of rows) out.add(row.path);
  }
  return out;
}
