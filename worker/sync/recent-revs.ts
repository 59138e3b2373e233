/**
 * revs (GET, PROTOCOL.md §7.3): committed revs newest first, with the host
 * and time from `revs` and some of the paths each wrote. Keyset paging on
 * `revs`' primary key; each rev's paths are a range of `entries_by_rev`.
 * Only paths whose current state the rev wrote are listed: a path a later
 * rev changed again is in `versions`, which has no index by rev (one more
 * billed row per overwrite), so `entries` says how many the rev wrote.
 */
import type { RevSummary, RevsPage, RevsQuery } from "../../protocol/browse.ts";
import type { Db } from "./db.ts";
import { readCurrentRev } from "./history.ts";
import { hostLabel } from "./host-tag.ts";

/** `withHostIds` false (a read-only token): hosts appear by tag, not id (host-tag.ts). */
export function readRecentRevs(db: Db, q: RevsQuery, withHostIds: boolean): RevsPage {
  const before = q.before ?? Number.MAX_SAFE_INTEGER;
  const { rows } = db.exec<{ rev: number; at: number; host: Uint8Array; entries: number }>(
    `SELECT rev, at, host, entries FROM revs WHERE rev < ? ORDER BY rev DESC LIMIT ?`,
    before,
    q.limit + 1,
  );
  const page = rows.slice(0, q.limit);
  const revs: RevSummary[] = page.map((r) => ({
    rev: r.rev,
    at: r.at,
    host: hostLabel(r.host, withHostIds),
    entries: r.entries,
    paths:
      q.paths === 0
        ? []
        : db.exec<{ path: string; kind: string }>(
            `SELECT path, kind FROM entries WHERE rev = ? ORDER BY path LIMIT ?`,
            r.rev,
            q.paths,
          ).rows,
  }));
  const last = page[page.length - 1];
  return { rev: readCurrentRev(db), revs, next: rows.length > q.limit && last ? last.rev : null };
}
