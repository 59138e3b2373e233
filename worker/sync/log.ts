/**
 * log (PROTOCOL.md §4.7): the retained states of one path, newest first,
 * or the workspace's recent revs. Reads the path's entry and its versions
 * by the versions primary key (path, rev), and revs by rev; a page costs in
 * proportion to the page.
 */
import type { LogRequest, LogResponse, PathState, RevSummary } from "../../protocol/history.ts";
import { MAX_HISTORY_PAGE } from "../../protocol/history.ts";
import type { Db, SyncContext } from "./db.ts";
import { readCollectorRecord } from "./gc/summary.ts";
import { hostLabels, shownHostBytes } from "./host-tag.ts";

const DEFAULT_PAGE = 100;

interface StateRow {
  [column: string]: string | number | null | Uint8Array;
  rev: number;
  until_rev: number | null;
  kind: string;
  size: number | null;
  origin: Uint8Array;
}

export function log({ db, readOnly }: SyncContext, req: LogRequest): LogResponse {
  // A reader never learns the ids hosts push by (host-tag.ts).
  const shown = (id: Uint8Array) => shownHostBytes(id, !readOnly);
  const limit = Math.max(1, Math.min(req.limit ?? DEFAULT_PAGE, MAX_HISTORY_PAGE));
  const before = req.before ?? Number.MAX_SAFE_INTEGER;
  const retainedFrom = readCollectorRecord(db).historyCut ?? 0;
  if (req.path === undefined) {
    const rows = db.exec<{ rev: number; at: number; host: Uint8Array; entries: number }>(
      `SELECT rev, at, host, entries FROM revs WHERE rev < ? ORDER BY rev DESC LIMIT ?`,
      before,
      limit + 1,
    ).rows;
    const labelOf = hostLabels(db);
    const revs: RevSummary[] = rows.slice(0, limit).map((r) => ({ ...r, ...labelOf(r.host), host: shown(r.host) }));
    const last = revs.at(-1);
    return { revs, ...(rows.length > limit && last ? { next: last.rev } : {}), retainedFrom };
  }
  const { states, next } = pathStates(db, req.path, before, limit);
  return {
    states: states.map((st) => ({ ...st, host: shown(st.host) })),
    ...(next !== undefined ? { next } : {}),
    retainedFrom,
  };
}

/**
 * The path's states written before `before`, newest first: its current entry
 * (a tombstone says when it was deleted), then its versions. A version whose
 * `until_rev` is not the rev of the next state was deleted at `until_rev`
 * (versions keep no tombstones), so a `gone` state is listed there.
 */
function pathStates(db: Db, path: string, before: number, limit: number): { states: PathState[]; next?: number } {
  const rows = db.exec<StateRow>(
    `SELECT rev, NULL AS until_rev, kind, size, origin FROM entries WHERE path = ?1 AND rev < ?2
     UNION ALL
     SELECT rev, until_rev, kind, size, origin FROM (
       SELECT rev, until_rev, kind, size, origin FROM versions WHERE path = ?1 AND rev < ?2 ORDER BY rev DESC LIMIT ?3)
     ORDER BY rev DESC`,
    path,
    before,
    limit + 1,
  ).rows;
  const times = revTimes(db, rows);
  const labelOf = hostLabels(db);
  const states: PathState[] = [];
  // The rev of the next newer state: a version replaced at it ran up to it without a gap.
  let newer: number | null = before === Number.MAX_SAFE_INTEGER ? null : before;
  for (const row of rows) {
    if (row.until_rev !== null && row.until_rev !== newer) {
      const by = times.get(row.until_rev);
      const host = by?.host ?? row.origin;
      states.push({ rev: row.until_rev, at: by?.at ?? 0, host, ...labelOf(host), kind: "gone" });
    }
    states.push({
      rev: row.rev,
      at: times.get(row.rev)?.at ?? 0,
      host: row.origin,
      ...labelOf(row.origin),
      kind: row.kind as PathState["kind"],
      ...(row.kind === "file" && row.size !== null ? { size: row.size } : {}),
      ...(row.until_rev !== null ? { until: row.until_rev } : {}),
    });
    newer = row.rev;
  }
  const page = states.slice(0, limit);
  const last = page.at(-1);
  const more = states.length > limit || rows.length > limit;
  return { states: page, ...(more && last ? { next: last.rev } : {}) };
}

/** When each rev the rows name (and their until revs) committed, and by which host. */
function revTimes(db: Db, rows: readonly StateRow[]): Map<number, { at: number; host: Uint8Array }> {
  const revs = new Set<number>();
  for (const r of rows) {
    revs.add(r.rev);
    if (r.until_rev !== null) revs.add(r.until_rev);
  }
  const out = new Map<number, { at: number; host: Uint8Array }>();
  const found = db.exec<{ rev: number; at: number; host: Uint8Array }>(
    `SELECT rev, at, host FROM revs WHERE rev IN (SELECT value FROM json_each(?))`,
    JSON.stringify([...revs]),
  ).rows;
  for (const r of found) out.set(r.rev, { at: r.at, host: r.host });
  return out;
}
