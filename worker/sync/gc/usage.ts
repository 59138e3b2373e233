/**
 * How big a workspace is and why (`GET /stats`, `storage`): the bytes the
 * current tree needs, the bytes only history keeps, the bytes nothing
 * names yet (uploads in their grace, or garbage the next collection takes),
 * and what is really stored (packs, dead bytes in them included). It reads
 * every entry, version and object, O(storage): an operator's look, never on
 * the sync path. The walk is SQL's: each object is classed by whether a
 * live file or a kept version names it, in one statement, so no row crosses
 * into JavaScript (a walk that did took ~1 s at 100,000 files in workerd,
 * BENCHMARKS.md section 6).
 */
import type { StorageUsage } from "../../../protocol/stats.ts";
import type { SyncContext } from "../db.ts";
import type { Retention } from "../retention.ts";
import { readCollectorRecord, readTombstonesDropped } from "./summary.ts";

export type { StorageUsage };

/**
 * A table's chunk lists cut down to single hashes, as SQL (duplicates stay;
 * `IN` sets them). A one-hash list, most files', is its hash; a longer one
 * goes through `${name}_cut`, halved until each part is one hash: a cut at
 * every 32 bytes would copy a long list once a hash, and a list may hold
 * 60,000 (entries.ts); halving copies it once a level, ~16 times.
 */
function hashesOf(name: string, table: "entries" | "versions"): { cte: string; set: string } {
  const files = table === "entries" ? `kind = 'file' AND ` : "";
  const cut = `${name}_cut`;
  return {
    cte: `${cut} (part) AS (
      SELECT chunks FROM ${table} WHERE ${files}length(chunks) > 32
      UNION ALL SELECT substr(part, 1, length(part) / 64 * 32) FROM ${cut} WHERE length(part) > 32
      UNION ALL SELECT substr(part, length(part) / 64 * 32 + 1) FROM ${cut} WHERE length(part) > 32)`,
    set: `SELECT chunks FROM ${table} WHERE ${files}length(chunks) = 32
      UNION ALL SELECT part FROM ${cut} WHERE length(part) = 32`,
  };
}

const LIVE = hashesOf("live", "entries");
const KEPT = hashesOf("kept", "versions");

/**
 * Every object once, classed by the first set that names it (live files,
 * then kept versions). The subquery's LIMIT keeps SQLite from copying the
 * CASE into each sum (which would build each set's index once per copy).
 */
const OBJECT_CLASSES = `WITH RECURSIVE ${LIVE.cte}, ${KEPT.cte}
  SELECT count(*) AS objects, total(iif(pack IS NULL, size, 0)) AS inline,
    total(iif(class = 1, size, 0)) AS live, total(iif(class = 2, size, 0)) AS history,
    total(iif(class = 0, size, 0)) AS unreferenced
  FROM (SELECT size, pack,
      CASE WHEN hash IN (${LIVE.set}) THEN 1 WHEN hash IN (${KEPT.set}) THEN 2 ELSE 0 END AS class
    FROM objects LIMIT -1)`;

interface ObjectClasses {
  objects: number;
  inline: number;
  live: number;
  history: number;
  unreferenced: number;
}

export function readUsage(
  { db }: SyncContext,
  retention: Retention | null,
): Omit<StorageUsage, "usedBytes" | "capBytes"> {
  const classes = db.exec<ObjectClasses & Record<string, number>>(OBJECT_CLASSES).rows[0] as ObjectClasses;
  const counts = db.exec<{ versions: number; tombstones: number }>(
    `SELECT (SELECT count(*) FROM versions) AS versions,
       (SELECT count(*) FROM entries WHERE kind = 'gone') AS tombstones`,
  ).rows[0] as { versions: number; tombstones: number };
  const packs = db.exec<{ n: number; bytes: number | null }>(`SELECT count(*) AS n, sum(size) AS bytes FROM packs`)
    .rows[0];
  const oldest = db.exec<{ rev: number; path: string | null; seen: number }>(
    `SELECT acked_rev AS rev, acked_path AS path, last_seen AS seen FROM hosts ORDER BY last_seen LIMIT 1`,
  ).rows[0];
  const record = readCollectorRecord(db);
  return {
    liveBytes: classes.live,
    historyBytes: classes.history,
    unreferencedBytes: classes.unreferenced,
    storedBytes: (packs?.bytes ?? 0) + classes.inline,
    objects: classes.objects,
    packs: packs?.n ?? 0,
    versions: counts.versions,
    tombstones: counts.tombstones,
    tombstonesDroppedUpTo: readTombstonesDropped(db),
    oldestHost: oldest
      ? { lastSeen: new Date(oldest.seen).toISOString(), acked: { rev: oldest.rev, path: oldest.path } }
      : null,
    retention: retention && {
      history: `${retention.historyMs / 1000}s`,
      uploadGrace: `${retention.graceMs / 1000}s`,
      tombstoneHorizon: `${retention.horizonMs / 1000}s`,
      packGrace: `${retention.packGraceMs / 1000}s`,
    },
    lastCollection: record.last,
    collecting: record.running !== null,
  };
}
