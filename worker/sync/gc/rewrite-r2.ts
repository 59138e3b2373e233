/**
 * Sparse packs rewritten into R2, and old SQLite packs moved there
 * (PROTOCOL.md §7.9), one batch a call, on the object's alarm. These reads
 * and writes are the one place the object touches pack bytes in R2: the
 * stateless Worker writes uploads and reads downloads.
 *
 * A batch is the wanted objects of a few old packs, read (merged R2 ranges,
 * or a SQLite pack's row), each checked against its hash, and written as one
 * new pack to R2. Then, in one transaction, the new pack is named (its row,
 * the index rows moved to it), and only then are the old packs let go: a
 * SQLite pack deleted (nothing outside the object reads it), a pack in R2
 * condemned, its bytes deleted after the pack grace, so a download that was
 * told where they were a moment ago still finds them. A pack whose bytes are
 * missing or altered is left as it is, for `workspace check` to name.
 */
import { hashesEqual, sha256, toHex } from "../../../protocol/hash.ts";
import type { Db } from "../db.ts";
import { readEpoch } from "../meta.ts";
import type { PackStore } from "../pack-store.ts";
import { nextPackId } from "../packs.ts";
import { type Member, moveRows } from "./compact.ts";
import { queuedForDeletion } from "./r2-deletes.ts";
import { condemnPacks, revivePacks } from "./revive.ts";

/** Wanted bytes one batch gathers: about one pack as the ingest writes them (r2-ingest.ts). */
export const REWRITE_BATCH_BYTES = 8 * 1024 * 1024;

export interface RewriteOutcome {
  /** Old packs whose objects moved. */
  readonly rewritten: number;
  /** Bytes of the new pack. */
  readonly written: number;
  /** Bytes of SQLite packs deleted: the object's storage freed. */
  readonly sqliteBytes: number;
  readonly condemned: number;
}

const NOTHING: RewriteOutcome = { rewritten: 0, written: 0, sqliteBytes: 0, condemned: 0 };

/** The members of the first packs of `members` (sorted by pack) up to REWRITE_BATCH_BYTES, each pack whole. */
export function takeBatch(members: readonly Member[]): Member[] {
  let bytes = 0;
  let end = 0;
  while (end < members.length) {
    const pack = (members[end] as Member).pack;
    if (end > 0 && bytes >= REWRITE_BATCH_BYTES) break;
    while (end < members.length && (members[end] as Member).pack === pack) bytes += (members[end++] as Member).size;
  }
  return members.slice(0, end);
}

/**
 * Rewrites `batch` into one new pack in R2. `touched`: packs a write named
 * during the run, never condemned by it. `abandoned`: the workspace was
 * deleted while R2 was busy, so nothing is recorded.
 */
export async function rewriteIntoR2(
  db: Db,
  store: PackStore,
  batch: readonly Member[],
  touched: ReadonlySet<number>,
  now: () => number,
  abandoned: () => boolean,
): Promise<RewriteOutcome> {
  const chunks: { member: Member; bytes: Uint8Array }[] = [];
  const moved: { id: number; sqliteBytes: number; inR2: boolean }[] = [];
  for (const [id, members] of byPack(batch)) {
    const row = db.exec<{ key: string | null; bytes: Uint8Array | null }>(
      `SELECT r2_key AS key, bytes FROM packs WHERE id = ?`,
      id,
    ).rows[0];
    // Only the collector deletes packs, and this run judged this one after its sweep.
    if (row === undefined) throw new Error(`pack ${id} to rewrite is not stored`);
    const read = await readMembers(store, row, members);
    if (read === null) {
      console.error(`ferry: collection: pack ${row.key ?? id} is missing or altered; left for workspace check`);
      continue;
    }
    read.forEach((bytes, i) => {
      chunks.push({ member: members[i] as Member, bytes });
    });
    moved.push({ id, sqliteBytes: row.bytes?.byteLength ?? 0, inR2: row.key !== null });
  }
  if (chunks.length === 0) return NOTHING;
  const history = toHex(readEpoch(db));
  const stored = await store.writePack(
    chunks.map((c) => ({ hash: c.member.hash, bytes: c.bytes })),
    history,
  );
  if (abandoned()) return NOTHING;
  return db.transaction(() => {
    const existing = db.exec<{ id: number }>(`SELECT id FROM packs WHERE r2_key = ?`, stored.key).rows[0]?.id;
    // The same bytes under a key queued for deletion: R2 may drop them at any moment; the next run tries
    // again. One deleted before (in an earlier step) was written anew by this put, and is forgotten.
    if (existing === undefined && queuedForDeletion(db, stored.key)) return NOTHING;
    const id = existing ?? nextPackId(db);
    if (existing === undefined) {
      db.exec(`INSERT INTO packs (id, r2_key, size) VALUES (?, ?, ?)`, id, stored.key, stored.size);
    } else revivePacks(db, [id]);
    moveRows(
      db,
      chunks.map((c, i) => ({
        hash: c.member.hash,
        old: c.member.pack,
        pack: id,
        offset: (stored.members[i] as { offset: number }).offset,
      })),
    );
    const sqlite = moved.filter((m) => !m.inR2).map((m) => m.id);
    if (sqlite.length > 0)
      db.exec(`DELETE FROM packs WHERE id IN (SELECT value FROM json_each(?))`, JSON.stringify(sqlite));
    const r2 = moved.filter((m) => m.inR2 && !touched.has(m.id)).map((m) => m.id);
    return {
      rewritten: moved.length,
      written: stored.size,
      sqliteBytes: moved.reduce((n, m) => n + m.sqliteBytes, 0),
      condemned: condemnPacks(db, r2, now()),
    };
  });
}

function byPack(batch: readonly Member[]): Map<number, Member[]> {
  const out = new Map<number, Member[]>();
  for (const m of batch) {
    const list = out.get(m.pack);
    if (list) list.push(m);
    else out.set(m.pack, [m]);
  }
  return out;
}

/** The members' bytes, checked against their hashes; null when the pack is missing or any differs. */
async function readMembers(
  store: PackStore,
  row: { key: string | null; bytes: Uint8Array | null },
  members: readonly Member[],
): Promise<Uint8Array[] | null> {
  const ranges = members.map((m) => ({ offset: m.offset, size: m.size }));
  const read =
    row.key !== null
      ? await store.readRanges(row.key, ranges)
      : ranges.map((r) => (row.bytes as Uint8Array).subarray(r.offset, r.offset + r.size));
  if (read === null) return null;
  const hashes = await Promise.all(read.map((bytes) => sha256(bytes)));
  return hashes.every((h, i) => hashesEqual(h, (members[i] as Member).hash)) ? read : null;
}
