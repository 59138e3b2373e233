/**
 * The history tables (schema migration 3): `revs`, one row per committed
 * rev with its identity, and `versions`, the live states accepted packs
 * replaced. apply.ts writes both inside push's transaction.
 */
import { subtreeRange } from "../../protocol/paths.ts";
import type { Db } from "./db.ts";
import { jsonWindows } from "./entries.ts";

/** Bytes of a rev's identity (`revs.id`). */
export const REV_ID_BYTES = 16;

/** The current rev: the newest committed, 0 for an empty workspace. */
export function readCurrentRev(db: Db): number {
  return db.exec<{ rev: number }>(`SELECT rev FROM revs ORDER BY rev DESC LIMIT 1`).rows[0]?.rev ?? 0;
}

/** The identity of `rev`, or null when this storage has no such rev (never committed, or pruned). */
export function readRevId(db: Db, rev: number): Uint8Array | null {
  return db.exec<{ id: Uint8Array }>(`SELECT id FROM revs WHERE rev = ?`, rev).rows[0]?.id ?? null;
}

export interface RevRecord {
  readonly rev: number;
  readonly at: number;
  readonly host: Uint8Array;
  readonly entries: number;
}

/** Records a committed rev under a fresh random identity, which it returns: one row written. */
export function recordRev(db: Db, r: RevRecord): Uint8Array {
  const id = crypto.getRandomValues(new Uint8Array(REV_ID_BYTES));
  db.exec(`INSERT INTO revs (rev, at, host, id, entries) VALUES (?, ?, ?, ?, ?)`, r.rev, r.at, r.host, id, r.entries);
  return id;
}

/**
 * Copies the live stored states that `untilRev` is about to replace into
 * `versions`: those of `paths` (the pack's changed entries) and every live
 * path under `roots` (the paths that stop being directories). Called by
 * apply.ts before it writes, so the rows copied are the old states; a path
 * both in the pack and under a root is copied once. A new path writes
 * nothing here.
 */
export function saveReplacedStates(db: Db, paths: readonly string[], roots: readonly string[], untilRev: number): void {
  const columns = `path, rev, until_rev, kind, mode, mtime, size, chunks, target, origin`;
  const selected = `e.path, e.rev, ?1, e.kind, e.mode, e.mtime, e.size, e.chunks, e.target, e.origin`;
  for (const json of jsonWindows(paths)) {
    db.exec(
      `INSERT OR IGNORE INTO versions (${columns})
       SELECT ${selected} FROM json_each(?2) j CROSS JOIN entries e ON e.path = j.value WHERE e.kind != 'gone'`,
      untilRev,
      json,
    );
  }
  for (const json of jsonWindows(roots.map(subtreeRange))) {
    db.exec(
      `INSERT OR IGNORE INTO versions (${columns})
       SELECT ${selected} FROM json_each(?2) j CROSS JOIN entries e
       WHERE e.path >= j.value ->> '$.from' AND e.path < j.value ->> '$.to' AND e.kind != 'gone'`,
      untilRev,
      json,
    );
  }
}
