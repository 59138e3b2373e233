/**
 * The subtree a pack replaces (PROTOCOL.md §4.5 rule 7): a path the pack
 * turns into a file, symlink or tombstone takes every live path under it
 * with it (apply.ts). A live descendant that another host wrote after the
 * pushing host last pulled, and that the pack does not name itself, is
 * work that host never saw: deleting it would lose a file no conflict copy
 * holds. apply.ts refuses the pack naming it; the host pulls it and keeps it.
 */
import type { Conflict } from "../../protocol/conflict.ts";
import { subtreeRange } from "../../protocol/paths.ts";
import type { PushEntry, PushRequest } from "../../protocol/push.ts";
import type { Db } from "./db.ts";
import { jsonWindows } from "./entries.ts";

/** Conflicts reported at most per pack: enough for the host to pull, bounded for the answer. */
export const MAX_SUBTREE_CONFLICTS = 1000;

/**
 * Live descendants of the pack's replacing entries (those in `changed`
 * that are not directories and carry a `base`) written by another host
 * after `pulled` (or, without it, after the replacing entry's base). One
 * range scan on the path primary key per window of roots.
 */
export function findSubtreeConflicts(db: Db, req: PushRequest, changed: readonly PushEntry[]): Conflict[] {
  const roots = changed.filter((e) => e.kind !== "dir" && e.base !== undefined);
  if (roots.length === 0) return [];
  const inPack = new Set(req.entries.map((e) => e.path));
  const windows = jsonWindows(
    roots.map((e) => ({ ...subtreeRange(e.path), root: e.path, after: req.pulled ?? e.base ?? 0 })),
  );
  // By path: nested roots (a pack deleting `d` and `d/sub`) see the same descendants.
  const out = new Map<string, Conflict>();
  for (const json of windows) {
    // Rows the pack names are skipped after the query, so the limit leaves room for all of them.
    const { rows } = db.exec<{ path: string; rev: number; root: string }>(
      `SELECT e.path, e.rev, j.value ->> '$.root' AS root FROM json_each(?1) j CROSS JOIN entries e
       WHERE e.path >= j.value ->> '$.from' AND e.path < j.value ->> '$.to'
         AND e.kind != 'gone' AND e.rev > j.value ->> '$.after' AND e.origin != ?2
       LIMIT ?3`,
      json,
      req.hostId,
      MAX_SUBTREE_CONFLICTS + req.entries.length,
    );
    for (const row of rows) {
      if (inPack.has(row.path) || out.has(row.path)) continue;
      out.set(row.path, { path: row.path, rev: row.rev, under: row.root });
      if (out.size >= MAX_SUBTREE_CONFLICTS) return [...out.values()];
    }
  }
  return [...out.values()];
}
