/**
 * The history tables (schema migration 3): `revs`, one row per committed
 * rev with its identity, and `versions`, the live states accepted packs
 * replaced. apply.ts writes both inside push's transaction.
 */
import { hashesEqual } from "../../protocol/hash.ts";
import { REV_ID_BYTES } from "../../protocol/hello.ts";
import { subtreeRange } from "../../protocol/paths.ts";
import type { Db } from "./db.ts";
import { jsonWindows } from "./entries.ts";

/** The current rev: the newest committed, 0 for an empty workspace. */
export function readCurrentRev(db: Db): number {
  return db.exec<{ rev: number }>(`SELECT rev FROM revs ORDER BY rev DESC LIMIT 1`).rows[0]?.rev ?? 0;
}

/**
 * The epoch, the current rev and its identity in one statement: changes
 * reads them on every page, and a page is bounded in statements too.
 */
export function readHead(db: Db): { epoch: Uint8Array; rev: number; revId: Uint8Array | null } {
  const row = db.exec<{ epoch: Uint8Array; rev: number | null; id: Uint8Array | null }>(
    `SELECT m.value AS epoch, r.rev, r.id FROM meta m
     LEFT JOIN (SELECT rev, id FROM revs ORDER BY rev DESC LIMIT 1) r
     WHERE m.key = 'epoch'`,
  ).rows[0];
  // migrate() creates the epoch before any operation runs.
  if (!row) throw new Error("workspace has no epoch: schema not migrated");
  return { epoch: row.epoch, rev: row.rev ?? 0, revId: row.id };
}

/** The identity of `rev`, or null when this storage has no such rev (never committed, or pruned). */
export function readRevId(db: Db, rev: number): Uint8Array | null {
  return db.exec<{ id: Uint8Array }>(`SELECT id FROM revs WHERE rev = ?`, rev).rows[0]?.id ?? null;
}

/**
 * Whether `id` is the identity this storage holds for `rev`: the check that
 * a host's position is in this history (hello, changes, push). Rev 0 needs
 * none; a rev this storage has no row for (never committed here, or pruned)
 * cannot be vouched for.
 */
export function revIdMatches(db: Db, rev: number, id: Uint8Array | undefined): boolean {
  if (rev === 0) return true;
  const held = readRevId(db, rev);
  return held !== null && id !== undefined && hashesEqual(held, id);
}

export interface RevRecord {
  readonly rev: number;
  readonly at: number;
  readonly host: Uint8Array;
  readonly entries: number;
  /** The sizes of the files it wrote, summed. */
  readonly bytes: number;
}

/** Records a committed rev under a fresh random identity, which it returns: one row written. */
export function recordRev(db: Db, r: RevRecord): Uint8Array {
  const id = crypto.getRandomValues(new Uint8Array(REV_ID_BYTES));
  db.exec(
    `INSERT INTO revs (rev, at, host, id, entries, bytes) VALUES (?, ?, ?, ?, ?, ?)`,
    r.rev,
    r.at,
    r.host,
    id,
    r.entries,
    r.bytes,
  );
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
