/**
 * versions (GET, PROTOCOL.md §7.5): the states a path has had, newest first,
 * for the page's versions dialog. The listing is storage's `log` of a path
 * (worker/sync/log.ts, which `ferry log` reads too): its current entry, then
 * what `versions` kept, with a deletion listed where a state was removed
 * rather than replaced. Here it becomes JSON, hosts by id or tag.
 */
import type { PathVersion, VersionsPage, VersionsQuery } from "../../protocol/browse.ts";
import type { SyncContext } from "./db.ts";
import { shownHost } from "./host-tag.ts";
import { log } from "./log.ts";

export function readPathVersions(sync: SyncContext, q: VersionsQuery, withHostIds: boolean): VersionsPage {
  const page = log(sync, { path: q.path, limit: q.limit, ...(q.before === null ? {} : { before: q.before }) });
  const versions = (page.states ?? []).map(
    (s): PathVersion => ({
      rev: s.rev,
      until: s.until ?? null,
      at: s.at,
      host: shownHost(s.host, withHostIds),
      ...(s.label === undefined ? {} : { label: s.label }),
      kind: s.kind,
      ...(s.size === undefined ? {} : { size: s.size }),
    }),
  );
  return { path: q.path, versions, next: page.next ?? null, retainedFrom: page.retainedFrom };
}
