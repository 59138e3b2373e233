/**
 * Objects whose stored bytes were found missing or wrong (PROTOCOL.md
 * §7.11): a pack deleted or truncated behind ferry's back (a file under
 * `ferry serve`'s `<data>/r2`, a row of the object's SQLite), or bytes that
 * no longer hash to their name. The workspace check and the reads that meet
 * such a pack (objects/get, file) forget them: the index row that placed
 * the object there goes, so `has` answers it missing and the next upload of
 * it (a host that holds the file: `ferry push --heal`) stores it anew, and
 * a row here remembers it, so the check keeps naming it until then and a
 * pull names it `object_damaged` rather than a fault.
 *
 * An object is forgotten only where it was found: a row that has moved on
 * since (the collector deleted it, an upload stored it again) is left as it
 * is. The collector deletes index rows before the bytes they place (§7.9),
 * so an index row naming absent bytes is damage, never a collection.
 */
import { toHex } from "../../protocol/hash.ts";
import type { Db } from "./db.ts";
import { hashWindows, WANTED_CTE } from "./hash-list.ts";

/** Where an object was found damaged: the pack the index placed it in (null: inline in its row). */
export interface FoundDamaged {
  readonly hash: Uint8Array;
  readonly pack: number | null;
}

/**
 * Forgets each object still placed where it was found (`pack`), and
 * remembers it as damaged at `at` (ms), in one transaction of its own: the
 * callers (the check, objects/get, the file stream, the Worker's RPC) hold
 * none, and found the damage after an await, so the row is matched again.
 */
export function forgetDamaged(db: Db, found: readonly FoundDamaged[], at: number): void {
  if (found.length === 0) return;
  db.transaction(() => {
    for (const f of found) {
      const where = f.pack === null ? "pack IS NULL" : "pack = ?2";
      const params = f.pack === null ? [f.hash] : [f.hash, f.pack];
      if (db.exec(`DELETE FROM objects WHERE hash = ?1 AND ${where}`, ...params).rowsWritten === 0) continue;
      db.exec(`INSERT OR REPLACE INTO damaged_objects (hash, found_at) VALUES (?, ?)`, f.hash, at);
    }
  });
}

/**
 * The objects now stored again are no longer damaged: called by writeIndex
 * (packs.ts) for every index row it writes, in its transaction. One seek on
 * an empty table when nothing was ever damaged.
 */
export function clearDamaged(db: Db, hashes: readonly Uint8Array[]): void {
  if (hashes.length === 0) return;
  if (db.exec(`SELECT 1 FROM damaged_objects LIMIT 1`).rows.length === 0) return;
  for (const w of hashWindows(hashes)) {
    db.exec(`${WANTED_CTE} DELETE FROM damaged_objects WHERE hash IN (SELECT hash FROM wanted)`, w.blob, w.count);
  }
}

/** Which of `hashes` are remembered as damaged (and not stored again since), each once. */
export function damagedAmong(db: Db, hashes: readonly Uint8Array[]): Uint8Array[] {
  if (hashes.length === 0) return [];
  if (db.exec(`SELECT 1 FROM damaged_objects LIMIT 1`).rows.length === 0) return [];
  const out = new Map<string, Uint8Array>();
  for (const w of hashWindows(hashes)) {
    const { rows } = db.exec<{ hash: Uint8Array }>(
      `${WANTED_CTE} SELECT hash FROM damaged_objects WHERE hash IN (SELECT hash FROM wanted)`,
      w.blob,
      w.count,
    );
    for (const r of rows) out.set(toHex(r.hash), r.hash);
  }
  return [...out.values()];
}

/** Up to `limit` damaged objects, in hash order (the check's first page). */
export function listDamaged(db: Db, limit: number): Uint8Array[] {
  return db
    .exec<{ hash: Uint8Array }>(`SELECT hash FROM damaged_objects ORDER BY hash LIMIT ?`, limit)
    .rows.map((r) => r.hash);
}

/**
 * Forgets the damaged objects `named` says nothing retained names (the
 * collector's sweep, at its end, gc/sweep.ts): the table is small, read whole.
 */
export function dropUnnamedDamaged(db: Db, named: (hash: Uint8Array) => boolean): void {
  const { rows } = db.exec<{ hash: Uint8Array }>(`SELECT hash FROM damaged_objects`);
  for (const r of rows) if (!named(r.hash)) db.exec(`DELETE FROM damaged_objects WHERE hash = ?`, r.hash);
}
