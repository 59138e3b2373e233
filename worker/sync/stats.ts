/**
 * stats: the workspace's state as JSON for a person (`GET /stats`). It
 * counts by scanning, O(tree); fine for an operator's look, never called on
 * the sync path.
 */
import { ORIGIN } from "../../protocol/cursor.ts";
import { toHex } from "../../protocol/hash.ts";
import type { WorkspaceStats } from "../../protocol/stats.ts";
import type { SyncContext } from "./db.ts";
import { readCurrentRev } from "./history.ts";
import { hostTag } from "./host-tag.ts";
import { readEpoch } from "./meta.ts";

/** Hosts listed, most recently seen first; `hostCount` says how many there are. */
const MAX_LISTED_HOSTS = 100;

/**
 * `withHostIds` false (a read-only token) leaves each host's id out: an id is
 * what a pushing host names itself by, and a reader has no use for it. It
 * gets the host's tag instead (host-tag.ts), to tell hosts apart.
 */
export function readStats({ db }: SyncContext, withHostIds = true): WorkspaceStats {
  const kinds = new Map(
    db
      .exec<{ kind: string; n: number }>(`SELECT kind, count(*) AS n FROM entries GROUP BY kind`)
      .rows.map((r) => [r.kind, r.n]),
  );
  const objects = db.exec<{ n: number; bytes: number | null }>(`SELECT count(*) AS n, sum(size) AS bytes FROM objects`)
    .rows[0];
  const hostCount = db.exec<{ n: number }>(`SELECT count(*) AS n FROM hosts`).rows[0]?.n ?? 0;
  const hosts = db
    .exec<{
      id: Uint8Array;
      label: string | null;
      rev: number;
      path: string | null;
      pulled: number | null;
      seen: number;
    }>(
      `SELECT hosts.id, label, acked_rev AS rev, acked_path AS path, pulled_rev AS pulled, last_seen AS seen
       FROM hosts LEFT JOIN host_labels ON host_labels.id = hosts.id ORDER BY last_seen DESC LIMIT ?`,
      MAX_LISTED_HOSTS,
    )
    .rows.map((h) => ({
      ...(withHostIds ? { id: toHex(h.id) } : { tag: hostTag(h.id) }),
      ...(h.label !== null ? { label: h.label } : {}),
      acked: h.rev === 0 ? ORIGIN : { rev: h.rev, path: h.path },
      ...(h.pulled !== null ? { pulled: h.pulled } : {}),
      lastSeen: new Date(h.seen).toISOString(),
    }));
  return {
    rev: readCurrentRev(db),
    epoch: toHex(readEpoch(db)),
    files: kinds.get("file") ?? 0,
    dirs: kinds.get("dir") ?? 0,
    symlinks: kinds.get("symlink") ?? 0,
    tombstones: kinds.get("gone") ?? 0,
    objects: objects?.n ?? 0,
    objectBytes: objects?.bytes ?? 0,
    hostCount,
    hosts,
  };
}
