/**
 * The collector's rewrites, after the packs are judged (classify.ts): packs
 * whose live share fell below COMPACT_BELOW have their live objects copied
 * into new packs and their index rows moved; here into SQLite, without a
 * bucket taking uploads (rewrite-r2.ts writes them to R2).
 *
 * Rewriting costs a row per moved object (its index row) to free the dead
 * bytes, so a pack is only rewritten once most of it is dead weight: kept
 * packs are at least COMPACT_BELOW live, so stored bytes stay within
 * 1/COMPACT_BELOW of what they hold.
 */
import { HASH_BYTES } from "../../../protocol/hash.ts";
import type { Db } from "../db.ts";
import { appendPack, nextPackId, PACK_BYTES } from "../packs.ts";
import type { Freed } from "./summary.ts";

/** A pack below this live share is rewritten. */
export const COMPACT_BELOW = 0.75;

/** A live object of a sparse pack, to be moved. */
export interface Member {
  readonly hash: Uint8Array;
  readonly pack: number;
  readonly offset: number;
  readonly size: number;
}

/**
 * Up to `limit` objects after `after` (a hash): adds those in `sparse` packs
 * that are `wanted` to `members`. In a SQLite pack every object left is
 * wanted (the sweep deleted the rest); a pack in R2 keeps its unwanted rows
 * until it is condemned (sweep.ts), and they stay with it. Returns the
 * cursor for the next slice, or null once all are gathered (then sorted).
 */
export function gatherMembers(
  db: Db,
  after: Uint8Array | null,
  limit: number,
  sparse: ReadonlyMap<number, number>,
  members: Member[],
  wanted: (hash: Uint8Array, at: number | null) => boolean,
): Uint8Array | null {
  const { rows } = db.exec<{ hash: Uint8Array; pack: number | null; offset: number; size: number; at: number | null }>(
    `SELECT hash, pack, "offset" AS offset, size, at FROM objects WHERE hash > ?1 ORDER BY hash LIMIT ?2`,
    after ?? new Uint8Array(0),
    limit,
  );
  for (const row of rows) {
    if (row.pack !== null && sparse.has(row.pack) && wanted(row.hash, row.at)) {
      members.push({ hash: row.hash, pack: row.pack, offset: row.offset, size: row.size });
    }
  }
  const last = rows.at(-1);
  if (rows.length === limit && last) return last.hash;
  // Gathered whole: in pack order, as the rewrite takes them.
  members.sort((a, b) => a.pack - b.pack || a.offset - b.offset);
  return null;
}

/** The members of the first `count` packs of `members` (sorted by pack). */
export function takePacks(members: readonly Member[], count: number): Member[] {
  let packs = 0;
  let end = 0;
  for (; end < members.length; end++) {
    if (end === 0 || (members[end] as Member).pack !== (members[end - 1] as Member).pack) {
      if (packs === count) break;
      packs++;
    }
  }
  return members.slice(0, end);
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
  moveRows(
    db,
    moves.map((m) => ({ hash: m.member.hash, old: m.member.pack, pack: first + m.index, offset: m.offset })),
  );
  parts.forEach((list, i) => {
    appendPack(db, first + i, list, sizes[i] as number);
    written += sizes[i] as number;
  });
  db.exec(`DELETE FROM packs WHERE id IN (SELECT value FROM json_each(?))`, JSON.stringify(oldPacks));
  return written;
}

/** An index row's move: from pack `old` to `offset` in pack `pack`. */
export interface RowMove {
  readonly hash: Uint8Array;
  readonly old: number;
  readonly pack: number;
  readonly offset: number;
}

/**
 * Moves index rows to their new packs, in one statement. Every member was
 * read after the sweep and only the collector moves or deletes rows:
 * a row not where it was read is a broken invariant, and throwing rolls
 * the slice back.
 */
export function moveRows(db: Db, moves: readonly RowMove[]): void {
  const hashes = new Uint8Array(moves.length * HASH_BYTES);
  moves.forEach((m, i) => {
    hashes.set(m.hash, i * HASH_BYTES);
  });
  const json = JSON.stringify(moves.map((m, i) => [i, m.pack, m.offset, m.old]));
  const moved = db.exec(
    `UPDATE objects SET pack = u.pack, "offset" = u.offset
     FROM (SELECT substr(?1, (j.value ->> 0) * ${HASH_BYTES} + 1, ${HASH_BYTES}) AS hash, j.value ->> 1 AS pack,
             j.value ->> 2 AS offset, j.value ->> 3 AS old FROM json_each(?2) j) u
     WHERE objects.hash = u.hash AND objects.pack = u.old
     RETURNING objects.hash`,
    hashes,
    json,
  ).rows.length;
  if (moved !== moves.length) throw new Error(`rewrite moved ${moved} of ${moves.length} objects`);
}

/**
 * One slice of the rewrite into SQLite: the first `count` packs' wanted members rewritten, counted in
 * `freed` (the bytes the old packs held, less what was written); returns the members still to do.
 */
export function rewriteSqliteBatch(
  db: Db,
  members: readonly Member[],
  count: number,
  sparse: ReadonlyMap<number, number>,
  freed: Freed,
): Member[] {
  const batch = takePacks(members, count);
  const packs = new Set(batch.map((m) => m.pack));
  const oldBytes = [...packs].reduce((n, p) => n + (sparse.get(p) ?? 0), 0);
  const written = rewritePacks(db, batch);
  freed.packsRewritten += packs.size;
  freed.storedBytes += oldBytes - written;
  return members.slice(batch.length);
}
