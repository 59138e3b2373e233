/**
 * versions (GET, PROTOCOL.md §7.5): the states a path has had, newest first:
 * its current entry, then what `versions` kept (states replaced by a later
 * rev, until retention drops them). Keyset paging on versions' primary key
 * (path, rev).
 */
import type { PathVersion, VersionsPage, VersionsQuery } from "../../protocol/browse.ts";
import type { Db } from "./db.ts";

interface StateRow {
  [column: string]: string | number | null;
  rev: number;
  until: number | null;
  kind: string;
  mode: number | null;
  mtime: number | null;
  size: number | null;
  target: string | null;
}

export function readPathVersions(db: Db, q: VersionsQuery): VersionsPage {
  const before = q.before ?? Number.MAX_SAFE_INTEGER;
  const current = db.exec<StateRow>(
    `SELECT rev, NULL AS until, kind, mode, mtime, size, target FROM entries WHERE path = ? AND rev < ?`,
    q.path,
    before,
  ).rows;
  const older = db.exec<StateRow>(
    `SELECT rev, until_rev AS until, kind, mode, mtime, size, target FROM versions
     WHERE path = ? AND rev < ? ORDER BY rev DESC LIMIT ?`,
    q.path,
    before,
    q.limit + 1 - current.length,
  ).rows;
  const rows = [...current, ...older];
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return { path: q.path, versions: page.map(toVersion), next: rows.length > q.limit && last ? last.rev : null };
}

function toVersion(r: StateRow): PathVersion {
  const base = { rev: r.rev, until: r.until };
  switch (r.kind) {
    case "file":
      return { ...base, kind: "file", mode: r.mode ?? 0, mtime: r.mtime ?? 0, size: r.size ?? 0 };
    case "dir":
      return { ...base, kind: "dir", mode: r.mode ?? 0, mtime: r.mtime ?? 0 };
    case "symlink":
      return { ...base, kind: "symlink", target: r.target ?? "" };
    default:
      return { ...base, kind: "gone" };
  }
}
