/**
 * Object bytes where the index placed them (packs.ts): objects/get and the
 * file route read through here.
 */
import type { Db } from "./db.ts";
import type { PackStore } from "./pack-store.ts";
import { noBucket, type Placement } from "./packs.ts";

/**
 * The bytes of each placement, reading each pack once (one statement per
 * pack, in id order) and slicing in JS. `substr` would not read less: SQLite
 * loads the whole value first (in workerd, 100 bytes of each of 64 1-MiB
 * packs took 47 ms, the whole packs 51 ms warm). objects/get bounds how many
 * packs one call reads instead. A pack in R2 (its row has a key, no bytes)
 * is read through `store` in merged ranges, after every SQLite pack was
 * read in one synchronous run. Null for a placement whose bytes are not
 * there: its pack row gone, or shorter than its slice, in SQLite or in R2
 * (damaged behind ferry's back, damaged.ts; the caller forgets it).
 */
export async function readPlaced(
  db: Db,
  store: PackStore | undefined,
  placements: readonly Placement[],
): Promise<(Uint8Array | null)[]> {
  const out = new Array<Uint8Array | null>(placements.length);
  const byPack = new Map<number, number[]>();
  placements.forEach((p, i) => {
    if (p.pack === null) out[i] = p.bytes ?? new Uint8Array(0);
    else {
      const list = byPack.get(p.pack);
      if (list) list.push(i);
      else byPack.set(p.pack, [i]);
    }
  });
  const remote: { key: string; members: number[] }[] = [];
  for (const id of [...byPack.keys()].sort((a, b) => a - b)) {
    const row = db.exec<{ bytes: Uint8Array | null; r2_key: string | null }>(
      `SELECT bytes, r2_key FROM packs WHERE id = ?`,
      id,
    ).rows[0];
    const members = byPack.get(id) as number[];
    if (row?.bytes === null) {
      remote.push({ key: row.r2_key as string, members });
      continue;
    }
    for (const i of members) {
      const p = placements[i] as Placement;
      // The placement was read in this same synchronous call, and the collector deletes index rows
      // before their pack: a pack missing or short here was damaged behind ferry's back.
      // A view, not a copy: the caller encodes its answer at once, in this same
      // synchronous call, so each pack's buffer lives only as long as a copy would.
      out[i] =
        row === undefined || p.offset + p.size > row.bytes.byteLength
          ? null
          : row.bytes.subarray(p.offset, p.offset + p.size);
    }
  }
  await Promise.all(
    remote.map(async ({ key, members }) => {
      // An R2 pack is condemned before it is deleted and kept for the grace (PROTOCOL.md §7.9), longer than any call.
      // A server restarted without its bucket (`ferry serve --no-r2`, a deploy without PACKS): the bytes
      // are not lost, only out of reach until the bucket is bound again, which is what the host is told.
      if (store === undefined) {
        throw noBucket(key);
      }
      const read = await store.readRanges(
        key,
        members.map((i) => placements[i] as Placement),
      );
      members.forEach((i, n) => {
        out[i] = read === null ? null : (read[n] as Uint8Array);
      });
    }),
  );
  return out;
}
