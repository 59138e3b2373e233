/**
 * The storage check (`GET …/check`, protocol/check.ts): every object the
 * index names is where it says (its pack stored and long enough, an inline
 * object its recorded size), and with `deep` its bytes hash to its name.
 * The index walk is SQL's, once, on the first page; `deep` then reads packs
 * in id order, up to DEEP_PAGE_BYTES a page, so a page stays inside the
 * object's memory and CPU per request whatever the workspace's size. Each
 * deep page scans the index for its packs' members (no index on `pack`:
 * that would cost every stored object a row more), O(objects) rows read.
 */
import type { CheckProblem } from "../../protocol/check.ts";
import { MAX_CHECK_PROBLEMS } from "../../protocol/check.ts";
import { hashesEqual, sha256, toHex } from "../../protocol/hash.ts";
import type { SyncContext } from "./db.ts";

/** Pack bytes one deep page reads and hashes at most (a pack larger than this is a page alone). */
export const DEEP_PAGE_BYTES = 32 * 1024 * 1024;

export interface CheckResult {
  readonly objects: number;
  readonly packs: number;
  readonly hashedBytes: number;
  readonly problems: CheckProblem[];
  readonly next: number | null;
}

export async function checkStorage({ db }: SyncContext, deep: boolean, after: number): Promise<CheckResult> {
  const problems: CheckProblem[] = [];
  const counts = db.exec<{ objects: number; packs: number }>(
    `SELECT (SELECT count(*) FROM objects) AS objects, (SELECT count(*) FROM packs) AS packs`,
  ).rows[0] as { objects: number; packs: number };
  const placed = (kind: CheckProblem["kind"], sql: string) => {
    for (const r of db.exec<{ hash: Uint8Array; pack: number | null }>(`${sql} LIMIT ${MAX_CHECK_PROBLEMS}`).rows) {
      problems.push({ kind, hash: toHex(r.hash), ...(r.pack === null ? {} : { pack: r.pack }) });
    }
  };
  if (after === 0) {
    placed(
      "pack_missing",
      `SELECT hash, pack FROM objects o WHERE pack IS NOT NULL AND NOT EXISTS (SELECT 1 FROM packs p WHERE p.id = o.pack)`,
    );
    placed(
      "pack_short",
      `SELECT o.hash, o.pack FROM objects o JOIN packs p ON p.id = o.pack
       WHERE o.offset + o.size > coalesce(length(p.bytes), p.size)`,
    );
    placed("length_mismatch", `SELECT hash, pack FROM objects WHERE pack IS NULL AND length(bytes) IS NOT size`);
  }
  if (!deep) return { ...counts, hashedBytes: 0, problems, next: null };

  let hashedBytes = 0;
  const mismatched = (hash: Uint8Array, bytes: Uint8Array, pack: number | null) =>
    sha256(bytes).then((actual) => {
      hashedBytes += bytes.byteLength;
      if (!hashesEqual(actual, hash))
        problems.push({ kind: "hash_mismatch", hash: toHex(hash), ...(pack === null ? {} : { pack }) });
    });
  if (after === 0) {
    const inline = db.exec<{ hash: Uint8Array; bytes: Uint8Array }>(
      `SELECT hash, bytes FROM objects WHERE pack IS NULL`,
    );
    await Promise.all(inline.rows.map((r) => mismatched(r.hash, r.bytes, null)));
  }
  // The packs of this page and their members, read in one synchronous run: the collector cannot move them between.
  const packs = new Map<number, Uint8Array>();
  let bytes = 0;
  let last = after;
  for (;;) {
    const row = db.exec<{ id: number; bytes: Uint8Array }>(
      `SELECT id, bytes FROM packs WHERE id > ? AND r2_key IS NULL ORDER BY id LIMIT 1`,
      last,
    ).rows[0];
    if (!row) break;
    packs.set(row.id, row.bytes);
    last = row.id;
    bytes += row.bytes.byteLength;
    if (bytes >= DEEP_PAGE_BYTES) break;
  }
  if (packs.size === 0) return { ...counts, hashedBytes, problems, next: null };
  const members = db.exec<{ hash: Uint8Array; pack: number; offset: number; size: number }>(
    `SELECT hash, pack, offset, size FROM objects WHERE pack > ? AND pack <= ?`,
    after,
    last,
  ).rows;
  const slices = members.flatMap((m) => {
    const pack = packs.get(m.pack);
    // A missing or short pack was named by the first page; a value that is no blob at all holds no object.
    if (!(pack instanceof Uint8Array)) {
      if (pack !== undefined) problems.push({ kind: "hash_mismatch", hash: toHex(m.hash), pack: m.pack });
      return [];
    }
    if (m.offset + m.size > pack.byteLength) return [];
    return [mismatched(m.hash, pack.subarray(m.offset, m.offset + m.size), m.pack)];
  });
  await Promise.all(slices);
  const more = db.exec(`SELECT 1 FROM packs WHERE id > ? AND r2_key IS NULL LIMIT 1`, last).rows.length > 0;
  return { ...counts, hashedBytes, problems: problems.slice(0, 4 * MAX_CHECK_PROBLEMS), next: more ? last : null };
}
