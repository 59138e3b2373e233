/**
 * revs (GET, PROTOCOL.md §7.3): committed revs newest first, with the host
 * and time (storage's `log` of the workspace, worker/sync/log.ts: keyset on
 * `revs`' primary key) and some of the paths each wrote, a range of
 * `entries_by_rev` per rev.
 * Only paths whose current state the rev wrote are listed: a path a later
 * rev changed again is in `versions`, which has no index by rev (one more
 * billed row per overwrite), so `entries` says how many the rev wrote.
 */
import type { RevSummary, RevsPage, RevsQuery } from "../../protocol/browse.ts";
import type { SyncContext } from "./db.ts";
import { readCurrentRev } from "./history.ts";
import { shownHost } from "./host-tag.ts";
import { log } from "./log.ts";

/** `withHostIds` false (a read-only token): hosts appear by tag, not id (host-tag.ts). */
export function readRecentRevs(sync: SyncContext, q: RevsQuery, withHostIds: boolean): RevsPage {
  const page = log(sync, { limit: q.limit, ...(q.before === null ? {} : { before: q.before }) });
  const revs: RevSummary[] = (page.revs ?? []).map((r) => ({
    rev: r.rev,
    at: r.at,
    host: shownHost(r.host, withHostIds),
    ...(r.label === undefined ? {} : { label: r.label }),
    entries: r.entries,
    paths:
      q.paths === 0
        ? []
        : sync.db.exec<{ path: string; kind: string }>(
            `SELECT path, kind FROM entries WHERE rev = ? ORDER BY path LIMIT ?`,
            r.rev,
            q.paths,
          ).rows,
  }));
  return { rev: readCurrentRev(sync.db), revs, next: page.next ?? null };
}
