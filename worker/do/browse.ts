/**
 * The browse routes inside the workspace object (PROTOCOL.md §7): the
 * Worker decodes the query and checks a read token (worker/browse-routes.ts),
 * then the object answers with JSON or, for `file`, the bytes as a stream.
 * Every answer is read-only and private: `cache-control: no-store`.
 */
import type { FileQuery, RevsQuery, TreeQuery, VersionsQuery } from "../../protocol/browse.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { readActivity } from "../sync/activity.ts";
import type { SyncContext } from "../sync/db.ts";
import { findFile, streamChunks } from "../sync/file-bytes.ts";
import { listDirectory } from "../sync/list-dir.ts";
import { readPathVersions } from "../sync/path-versions.ts";
import { readRecentRevs } from "../sync/recent-revs.ts";
import { downloadHeaders } from "./download-headers.ts";

export type BrowseRequest =
  | { readonly route: "tree"; readonly query: TreeQuery }
  | { readonly route: "revs"; readonly query: RevsQuery; readonly withHostIds: boolean }
  | { readonly route: "versions"; readonly query: VersionsQuery; readonly withHostIds: boolean }
  | { readonly route: "activity" }
  | { readonly route: "file"; readonly query: FileQuery };

const PRIVATE = { "cache-control": "no-store" };

export function browse(sync: SyncContext, req: BrowseRequest): Response {
  switch (req.route) {
    case "tree":
      return Response.json(listDirectory(sync.db, req.query), { headers: PRIVATE });
    case "revs":
      return Response.json(readRecentRevs(sync, req.query, req.withHostIds), { headers: PRIVATE });
    case "versions":
      return Response.json(readPathVersions(sync, req.query, req.withHostIds), { headers: PRIVATE });
    case "activity":
      return Response.json(readActivity(sync), { headers: PRIVATE });
    case "file": {
      const file = findFile(sync.db, req.query);
      if (file instanceof ProtocolError) return Response.json(file.toWire(), { status: file.status, headers: PRIVATE });
      return new Response(streamChunks(sync, file.path, file.chunks, sync.packStore), {
        headers: { ...PRIVATE, ...downloadHeaders(file) },
      });
    }
  }
}
