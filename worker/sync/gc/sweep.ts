/**
 * The collector's sweep, one slice each call: walk `objects` in hash order
 * and delete every object no mark names that was uploaded before the grace
 * cut; sum the bytes that stay in each pack for compaction (compact.ts).
 * Runs after both mark walks, so the marks hold every object a live entry or
 * retained version names, plus every object a push named since the run
 * started.
 *
 * An object in a pack in R2 keeps its index row while its pack lives, and
 * while its pack is condemned, for the pack grace (PROTOCOL.md §7.9): a push
 * naming it then finds it and revives the pack (revive.ts). Its row goes
 * once its pack's grace is over (`condemnedBefore`), before the pack's own
 * row and its bytes (classify.ts, r2-deletes.ts). A wanted object in a
 * condemned pack (uploaded again, so in its grace) revives it here.
 */
import { HASH_BYTES } from "../../../protocol/hash.ts";
import { dropUnnamedDamaged } from "../damaged.ts";
import type { Db } from "../db.ts";
import { WANTED_CTE } from "../hash-list.ts";
import type { HashMarks } from "./marks.ts";

export interface SweepSlice {
  /** The last hash walked; null when the walk reached the end. */
  readonly next: Uint8Array | null;
  readonly deleted: number;
  readonly deletedBytes: number;
  /** Bytes of inline objects deleted: stored in their index rows, so freed with them. */
  readonly inlineBytes: number;
  /** The oldest upload time among unmarked objects the grace kept, for scheduling. */
  readonly oldestGrace: number | null;
  /** Condemned packs in R2 this slice found a wanted object in: revive them. */
  readonly revive: readonly number[];
}

/**
 * Objects of packs up to `lastPack` that stay add their size to `live`
 * (by pack id); packs written during the run are not compacted by it.
 */
export function sweepObjects(
  db: Db,
  marks: HashMarks,
  after: Uint8Array | null,
  limit: number,
  { graceBefore, condemnedBefore }: { readonly graceBefore: number; readonly condemnedBefore: number },
  lastPack: number,
  live: Map<number, number>,
): SweepSlice {
  // The pack's row is one rowid seek per object; an inline object has none (r2 0, condemned null).
  const { rows } = db.exec<{
    hash: Uint8Array;
    pack: number | null;
    size: number;
    at: number | null;
    r2: number;
    condemned: number | null;
  }>(
    `SELECT o.hash AS hash, o.pack AS pack, o.size AS size, o.at AS at,
       coalesce(p.r2_key IS NOT NULL, 0) AS r2, p.condemned_at AS condemned
     FROM objects o LEFT JOIN packs p ON p.id = o.pack WHERE o.hash > ?1 ORDER BY o.hash LIMIT ?2`,
    after ?? new Uint8Array(0),
    limit,
  );
  const revive = new Set<number>();
  const doomed = new Uint8Array(rows.length * HASH_BYTES);
  let count = 0;
  let deletedBytes = 0;
  let inlineBytes = 0;
  let oldestGrace: number | null = null;
  for (const row of rows) {
    // An object without an upload time was stored before migration 4: past any grace.
    const inGrace = row.at !== null && row.at >= graceBefore;
    if (marks.has(row.hash) || inGrace) {
      if (inGrace && !marks.has(row.hash)) oldestGrace = Math.min(oldestGrace ?? (row.at as number), row.at as number);
      if (row.pack !== null && row.pack <= lastPack) live.set(row.pack, (live.get(row.pack) ?? 0) + row.size);
      if (row.condemned !== null) revive.add(row.pack as number);
      continue;
    }
    // In R2, a row stays while its pack lives (its bytes are there until the pack is rewritten or
    // condemned) and while the pack is condemned within its grace.
    if (row.r2 === 1 && (row.condemned === null || row.condemned > condemnedBefore)) continue;
    doomed.set(row.hash, count * HASH_BYTES);
    count++;
    deletedBytes += row.size;
    if (row.pack === null) inlineBytes += row.size;
  }
  if (count > 0) {
    db.exec(
      `${WANTED_CTE} DELETE FROM objects WHERE hash IN (SELECT hash FROM wanted)`,
      doomed.subarray(0, count * HASH_BYTES),
      count,
    );
  }
  const last = rows.at(-1);
  const next = rows.length < limit || !last ? null : last.hash;
  // The walk's end: an object remembered as damaged that nothing retained names any more needs no host
  // to upload it again, and the check stops naming it (damaged.ts).
  if (next === null) dropUnnamedDamaged(db, (hash) => marks.has(hash));
  return {
    next,
    deleted: count,
    deletedBytes,
    inlineBytes,
    oldestGrace,
    revive: [...revive],
  };
}
