/**
 * The collector's pack phases, after the sweep: packs with nothing live are
 * deleted; packs whose live share fell below COMPACT_BELOW are rewritten,
 * their live objects copied into new packs and their index rows moved.
 *
 * Rewriting costs a row per moved object (its index row) to free the dead
 * bytes, so a pack is only rewritten once most of it is dead weight: kept
 * packs are at least COMPACT_BELOW live, so stored bytes stay within
 * 1/COMPACT_BELOW of what they hold.
 */
import { HASH_BYTES } from "../../../protocol/hash.ts";
import type { Db } from "../db.ts";
import { appendPack, nextPackId, PACK_BYTES } from "../packs.ts";

/** A pack below this live share is rewritten. */
export const COMPACT_BELOW = 0.75;

export interface PackSlice {
  readonly next: number | null;
  readonly deleted: number;
  readonly deletedBytes: number;
}

/**
 * Up to `limit` packs after id `after`, up to `lastPack`: deletes those with
 * no live bytes and adds the sparse ones to `sparse` (id to stored size).
 */
export function classifyPacks(
  db: Db,
  after: number,
  limit: number,
  lastPack: number,
  live: ReadonlyMap<number, number>,
  sparse: Map<number, number>,
): PackSlice {
  // Packs in SQLite only: an R2 pack (r2_key) is condemned, revived and deleted in two phases
  // with a grace (PROTOCOL.md §7.9), never dropped here in one step.
  const { rows } = db.exec<{ id: number; size: number }>(
    `SELECT id, size FROM packs WHERE id > ?1 AND id <= ?2 AND r2_key IS NULL ORDER BY id LIMIT ?3`,
    after,
    lastPack,
    limit,
  );
  const dead: number[] = [];
  let deletedBytes = 0;
  for (const { id, size } of rows) {
    const held = live.get(id) ?? 0;
    if (held === 0) {
      dead.push(id);
      deletedBytes += size;
    } else if (held < size * COMPACT_BELOW) sparse.set(id, size);
  }
  if (dead.length > 0) db.exec(`DELETE FROM packs WHERE id IN (SELECT value FROM json_each(?))`, JSON.stringify(dead));
  const last = rows.at(-1);
  return { next: rows.length < limit || !last ? null : last.id, deleted: dead.length, deletedBytes };
}

/** A live object of a sparse pack, to be moved. */
export interface Member {
  readonly hash: Uint8Array;
  readonly pack: number;
  readonly offset: number;
  readonly size: number;
}

/** Up to `limit` objects after `after` (a hash): adds those in `sparse` packs to `members`. */
export function gatherMembers(
  db: Db,
  after: Uint8Array | null,
  limit: number,
  sparse: ReadonlyMap<number, number>,
  members: Member[],
): Uint8Array | null {
  const { rows } = db.exec<{ hash: Uint8Array; pack: number | null; offset: number; size: number }>(
    `SELECT hash, pack, "offset" AS offset, size FROM objects WHERE hash > ?1 ORDER BY hash LIMIT ?2`,
    after ?? new Uint8Array(0),
    limit,
  );
  for (const row of rows) {
    if (row.pack !== null && sparse.has(row.pack)) {
      members.push({ hash: row.hash, pack: row.pack, offset: row.offset, size: row.size });
    }
  }
  const last = rows.at(-1);
  return rows.length < limit || !last ? null : last.hash;
}

/**
 * Rewrites the sparse packs of `members` (sorted by pack, offset; all of one
 * pack's members together): copies their objects into new packs of up to
 * PACK_BYTES in that order, moves their index rows, deletes the old packs.
 * Returns the bytes of new packs written.
 */
export function rewritePacks(db: Db, members: readonly Member[]): number {
  const oldPacks = [...new Set(members.map((m) => m.pack))];
  const moves: { member: Member; index: number; offset: number }[] = [];
  const parts: Uint8Array[][] = [[]];
  const sizes = [0];
  let written = 0;
  for (const pack of oldPacks) {
    const row = db.exec<{ bytes: Uint8Array }>(`SELECT bytes FROM packs WHERE id = ?`, pack).rows[0];
    // The sweep is over, so only this phase changes these packs: a missing one is a broken invariant.
    if (!row) throw new Error(`pack ${pack} to rewrite is not stored`);
    for (const m of members) {
      if (m.pack !== pack) continue;
      let index = parts.length - 1;
      if ((sizes[index] as number) + m.size > PACK_BYTES && (sizes[index] as number) > 0) {
        index = parts.push([]) - 1;
        sizes.push(0);
      }
      moves.push({ member: m, index, offset: sizes[index] as number });
      (parts[index] as Uint8Array[]).push(row.bytes.subarray(m.offset, m.offset + m.size));
      sizes[index] = (sizes[index] as number) + m.size;
    }
  }
  // The index rows move first, to the ids the new packs will get, then the packs (packs.ts, appendPack says why).
  const first = nextPackId(db);
  const hashes = new Uint8Array(moves.length * HASH_BYTES);
  moves.forEach((m, i) => {
    hashes.set(m.member.hash, i * HASH_BYTES);
  });
  const json = JSON.stringify(moves.map((m, i) => [i, first + m.index, m.offset, m.member.pack]));
  const moved = db.exec(
    `UPDATE objects SET pack = u.pack, "offset" = u.offset
     FROM (SELECT substr(?1, (j.value ->> 0) * ${HASH_BYTES} + 1, ${HASH_BYTES}) AS hash, j.value ->> 1 AS pack,
             j.value ->> 2 AS offset, j.value ->> 3 AS old FROM json_each(?2) j) u
     WHERE objects.hash = u.hash AND objects.pack = u.old
     RETURNING objects.hash`,
    hashes,
    json,
  ).rows.length;
  // Every member was read after the sweep and nothing else moves objects: throwing rolls the slice back.
  if (moved !== moves.length) throw new Error(`rewrite moved ${moved} of ${moves.length} objects`);
  parts.forEach((list, i) => {
    appendPack(db, first + i, list, sizes[i] as number);
    written += sizes[i] as number;
  });
  db.exec(`DELETE FROM packs WHERE id IN (SELECT value FROM json_each(?))`, JSON.stringify(oldPacks));
  return written;
}
