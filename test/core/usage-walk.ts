/**
 * The storage figures that worker/sync/gc/usage.ts computes in SQL, computed
 * the way it did until 2026-12-01: a walk of every entry, version and
 * object in JavaScript, each hash marked once (gc/marks.ts). The usage
 * suite holds the SQL answer to this recount.
 */
import type { StorageUsage } from "../../protocol/stats.ts";
import type { Db } from "../../worker/sync/db.ts";
import { type BoundedChunksRow, boundedChunks, withChunkList } from "../../worker/sync/entries.ts";
import { HashMarks } from "../../worker/sync/gc/marks.ts";

const WALK_ROWS = 5000;

export type WalkedUsage = Pick<
  StorageUsage,
  "liveBytes" | "historyBytes" | "unreferencedBytes" | "storedBytes" | "objects" | "packs" | "versions" | "tombstones"
>;

/** The figures of `usage` that walkUsage recounts. */
export function walkedFigures(usage: WalkedUsage): WalkedUsage {
  const { liveBytes, historyBytes, unreferencedBytes, storedBytes, objects, packs, versions, tombstones } = usage;
  return { liveBytes, historyBytes, unreferencedBytes, storedBytes, objects, packs, versions, tombstones };
}

export function walkUsage(db: Db): WalkedUsage {
  const live = new HashMarks();
  let tombstones = 0;
  for (let after = ""; ; ) {
    const { rows } = db.exec<BoundedChunksRow & { kind: string }>(
      `SELECT path, rev, kind, ${boundedChunks()} FROM entries WHERE path > ? ORDER BY path LIMIT ?`,
      after,
      WALK_ROWS,
    );
    for (const r of rows) {
      if (r.kind === "file") live.addChunkList(withChunkList(db, r, "entries").chunks);
      else if (r.kind === "gone") tombstones++;
    }
    if (rows.length < WALK_ROWS) break;
    after = (rows.at(-1) as { path: string }).path;
  }
  const history = new HashMarks();
  let versions = 0;
  for (let after = { path: "", rev: -1 }; ; ) {
    const { rows } = db.exec<BoundedChunksRow>(
      `SELECT path, rev, ${boundedChunks()} FROM versions WHERE (path, rev) > (?, ?) ORDER BY path, rev LIMIT ?`,
      after.path,
      after.rev,
      WALK_ROWS,
    );
    versions += rows.length;
    for (const r of rows) history.addChunkList(withChunkList(db, r, "versions").chunks);
    if (rows.length < WALK_ROWS) break;
    const last = rows.at(-1) as { path: string; rev: number };
    after = { path: last.path, rev: last.rev };
  }
  const sums = { liveBytes: 0, historyBytes: 0, unreferencedBytes: 0, inlineBytes: 0, objects: 0 };
  for (let after: Uint8Array = new Uint8Array(0); ; ) {
    const { rows } = db.exec<{ hash: Uint8Array; size: number; pack: number | null }>(
      `SELECT hash, size, pack FROM objects WHERE hash > ? ORDER BY hash LIMIT ?`,
      after,
      WALK_ROWS,
    );
    sums.objects += rows.length;
    for (const r of rows) {
      if (live.has(r.hash)) sums.liveBytes += r.size;
      else if (history.has(r.hash)) sums.historyBytes += r.size;
      else sums.unreferencedBytes += r.size;
      if (r.pack === null) sums.inlineBytes += r.size;
    }
    if (rows.length < WALK_ROWS) break;
    after = (rows.at(-1) as { hash: Uint8Array }).hash;
  }
  const packs = db.exec<{ n: number; bytes: number | null }>(`SELECT count(*) AS n, sum(size) AS bytes FROM packs`)
    .rows[0];
  const { inlineBytes, ...walked } = sums;
  return { ...walked, storedBytes: (packs?.bytes ?? 0) + inlineBytes, packs: packs?.n ?? 0, versions, tombstones };
}
