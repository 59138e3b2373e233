/**
 * How big a workspace is and why (`GET /stats`, `storage`): the bytes the
 * current tree needs, the bytes only history keeps, the bytes nothing
 * names yet (uploads in their grace, or garbage the next collection takes),
 * and what is really stored (packs, dead bytes in them included). It walks
 * every entry, version and object, O(storage): an operator's look, never on
 * the sync path. Long chunk lists are read one at a time (entries.ts).
 */
import type { StorageUsage } from "../../../protocol/stats.ts";
import type { SyncContext } from "../db.ts";
import { type BoundedChunksRow, boundedChunks, withChunkList } from "../entries.ts";
import type { Retention } from "../retention.ts";
import { HashMarks } from "./marks.ts";
import { readCollectorRecord, readTombstonesDropped } from "./summary.ts";

const WALK_ROWS = 5000;

export type { StorageUsage };

export function readUsage({ db }: SyncContext, retention: Retention | null): StorageUsage {
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
  let liveBytes = 0;
  let historyBytes = 0;
  let unreferencedBytes = 0;
  let inlineBytes = 0;
  let objects = 0;
  for (let after: Uint8Array = new Uint8Array(0); ; ) {
    const { rows } = db.exec<{ hash: Uint8Array; size: number; pack: number | null }>(
      `SELECT hash, size, pack FROM objects WHERE hash > ? ORDER BY hash LIMIT ?`,
      after,
      WALK_ROWS,
    );
    objects += rows.length;
    for (const r of rows) {
      if (live.has(r.hash)) liveBytes += r.size;
      else if (history.has(r.hash)) historyBytes += r.size;
      else unreferencedBytes += r.size;
      if (r.pack === null) inlineBytes += r.size;
    }
    if (rows.length < WALK_ROWS) break;
    after = (rows.at(-1) as { hash: Uint8Array }).hash;
  }
  const packs = db.exec<{ n: number; bytes: number | null }>(
    `SELECT count(*) AS n, sum(length(bytes)) AS bytes FROM packs`,
  ).rows[0];
  const oldest = db.exec<{ rev: number; path: string | null; seen: number }>(
    `SELECT acked_rev AS rev, acked_path AS path, last_seen AS seen FROM hosts ORDER BY last_seen LIMIT 1`,
  ).rows[0];
  const record = readCollectorRecord(db);
  return {
    liveBytes,
    historyBytes,
    unreferencedBytes,
    storedBytes: (packs?.bytes ?? 0) + inlineBytes,
    objects,
    packs: packs?.n ?? 0,
    versions,
    tombstones,
    tombstonesDroppedUpTo: readTombstonesDropped(db),
    oldestHost: oldest
      ? { lastSeen: new Date(oldest.seen).toISOString(), acked: { rev: oldest.rev, path: oldest.path } }
      : null,
    retention: retention && {
      history: `${retention.historyMs / 1000}s`,
      uploadGrace: `${retention.graceMs / 1000}s`,
      tombstoneHorizon: `${retention.horizonMs / 1000}s`,
    },
    lastCollection: record.last,
    collecting: record.running !== null,
  };
}
