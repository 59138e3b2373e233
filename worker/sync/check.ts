/**
 * The storage check (`GET …/check`, protocol/check.ts): every object the
 * index names is where it says (its pack stored and long enough, an inline
 * object its recorded size), and with `deep` its bytes hash to its name.
 * The index walk is SQL's, once, on the first page; `deep` then reads packs
 * in id order, up to DEEP_PAGE_BYTES a page, so a page stays inside the
 * object's memory and CPU per request whatever the workspace's size. Packs
 * in R2 are listed for the Worker, which holds the bucket and checks them
 * (worker/r2/check-packs.ts), shallow or deep, a page at a time. Each
 * deep page scans the index for its packs' members (no index on `pack`:
 * that would cost every stored object a row more), O(objects) rows read.
 * What a page finds damaged is forgotten (damaged.ts): `has` then answers
 * it missing, and a host's `ferry push --heal` uploads it again.
 */
import type { CheckProblem } from "../../protocol/check.ts";
import { MAX_CHECK_PROBLEMS } from "../../protocol/check.ts";
import { hashesEqual, sha256, toHex } from "../../protocol/hash.ts";
import { type FoundDamaged, forgetDamaged, listDamaged } from "./damaged.ts";
import type { SyncContext } from "./db.ts";

/** Pack bytes one deep page reads and hashes at most (a pack larger than this is a page alone). */
export const DEEP_PAGE_BYTES = 32 * 1024 * 1024;

export interface CheckResult {
  readonly objects: number;
  readonly packs: number;
  readonly hashedBytes: number;
  readonly problems: CheckProblem[];
  readonly next: number | null;
  /** This page's packs in R2, with their members, for the Worker to check against the bucket (worker/r2/check-packs.ts). */
  readonly remote: RemotePack[];
}

/** A pack in R2 as the index records it: what the Worker compares the bucket's object with. */
export interface RemotePack {
  readonly id: number;
  readonly key: string;
  readonly size: number;
  readonly members: { readonly hash: Uint8Array; readonly offset: number; readonly size: number }[];
}

/** R2 packs one page names at most: the Worker reads each (a request's subrequests are bounded). */
export const REMOTE_PAGE_PACKS = 100;

export async function checkStorage({ db, now }: SyncContext, deep: boolean, after: number): Promise<CheckResult> {
  const problems: CheckProblem[] = [];
  // What this page finds damaged is forgotten (damaged.ts) once it is found; what earlier pages, checks
  // or reads forgot and no host has uploaded again is named `lost`, on the first page.
  const found: FoundDamaged[] = [];
  if (after === 0) {
    for (const hash of listDamaged(db, MAX_CHECK_PROBLEMS)) problems.push({ kind: "lost", hash: toHex(hash) });
  }
  const counts = db.exec<{ objects: number; packs: number }>(
    `SELECT (SELECT count(*) FROM objects) AS objects, (SELECT count(*) FROM packs) AS packs`,
  ).rows[0] as { objects: number; packs: number };
  const placed = (kind: CheckProblem["kind"], sql: string) => {
    for (const r of db.exec<{ hash: Uint8Array; pack: number | null }>(`${sql} LIMIT ${MAX_CHECK_PROBLEMS}`).rows) {
      problems.push({ kind, hash: toHex(r.hash), ...(r.pack === null ? {} : { pack: r.pack }) });
      found.push({ hash: r.hash, pack: r.pack });
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
  let hashedBytes = 0;
  const mismatched = (hash: Uint8Array, bytes: Uint8Array, pack: number | null) =>
    sha256(bytes).then((actual) => {
      hashedBytes += bytes.byteLength;
      if (!hashesEqual(actual, hash)) {
        problems.push({ kind: "hash_mismatch", hash: toHex(hash), ...(pack === null ? {} : { pack }) });
        found.push({ hash, pack });
      }
    });
  if (deep && after === 0) {
    const inline = db.exec<{ hash: Uint8Array; bytes: Uint8Array }>(
      `SELECT hash, bytes FROM objects WHERE pack IS NULL`,
    );
    await Promise.all(inline.rows.map((r) => mismatched(r.hash, r.bytes, null)));
  }
  // The packs of this page, in id order: deep, every pack, up to DEEP_PAGE_BYTES (an R2 pack counts its
  // size); shallow, R2 packs only (the SQL above checked the rest). Read with their members in one
  // synchronous run: the collector cannot move them between.
  const only = deep ? "" : "AND r2_key IS NOT NULL";
  const local = new Map<number, unknown>();
  const remote = new Map<number, RemotePack>();
  let bytes = 0;
  let last = after;
  for (;;) {
    const row = db.exec<{ id: number; bytes: Uint8Array | null; r2_key: string | null; size: number }>(
      `SELECT id, bytes, r2_key, size FROM packs WHERE id > ? ${only} ORDER BY id LIMIT 1`,
      last,
    ).rows[0];
    if (!row) break;
    last = row.id;
    if (row.r2_key !== null) remote.set(row.id, { id: row.id, key: row.r2_key, size: row.size, members: [] });
    else local.set(row.id, row.bytes);
    bytes += row.size;
    if ((deep && bytes >= DEEP_PAGE_BYTES) || remote.size >= REMOTE_PAGE_PACKS) break;
  }
  const done = { ...counts, hashedBytes, problems, next: null, remote: [] };
  if (local.size + remote.size === 0) {
    forgetDamaged(db, found, now());
    return done;
  }
  const members = db.exec<{ hash: Uint8Array; pack: number; offset: number; size: number }>(
    `SELECT hash, pack, offset, size FROM objects WHERE pack > ? AND pack <= ?`,
    after,
    last,
  ).rows;
  const slices = members.flatMap((m) => {
    const far = remote.get(m.pack);
    if (far !== undefined) {
      far.members.push({ hash: m.hash, offset: m.offset, size: m.size });
      return [];
    }
    const pack = local.get(m.pack);
    // A missing or short pack was named by the first page; a value that is no blob at all holds no object.
    if (!(pack instanceof Uint8Array)) {
      if (pack !== undefined) {
        problems.push({ kind: "hash_mismatch", hash: toHex(m.hash), pack: m.pack });
        found.push({ hash: m.hash, pack: m.pack });
      }
      return [];
    }
    if (m.offset + m.size > pack.byteLength) return [];
    return [mismatched(m.hash, pack.subarray(m.offset, m.offset + m.size), m.pack)];
  });
  await Promise.all(slices);
  forgetDamaged(db, found, now());
  const more = db.exec(`SELECT 1 FROM packs WHERE id > ? ${only} LIMIT 1`, last).rows.length > 0;
  return {
    ...done,
    hashedBytes,
    problems: problems.slice(0, 4 * MAX_CHECK_PROBLEMS),
    next: more ? last : null,
    remote: [...remote.values()],
  };
}
