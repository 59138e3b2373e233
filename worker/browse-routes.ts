/**
 * The read-only browse routes (PROTOCOL.md §7): GET with query parameters,
 * JSON answers (or a file's bytes), a read token enough. Decoded here, at
 * the edge, then answered by the workspace object (worker/do/browse.ts).
 */
import { Hono } from "hono";
import {
  type BrowseRoute,
  decodeFileQuery,
  decodeReadTokenTtl,
  decodeRevsQuery,
  decodeTreeQuery,
  decodeVersionsQuery,
} from "../protocol/browse.ts";
import { signToken, type TokenClaims } from "../protocol/token.ts";
import { authorize } from "./auth.ts";
import type { BrowseRequest } from "./do/browse.ts";
import type { Env } from "./env.ts";
import { workspaceStub } from "./workspace-stub.ts";

export const browseRoutes = new Hono<{ Bindings: Env }>();

const DECODERS: { readonly [R in BrowseRoute]: (q: URLSearchParams, claims: TokenClaims) => BrowseRequest } = {
  tree: (q) => ({ route: "tree", query: decodeTreeQuery(q) }),
  revs: (q, claims) => ({ route: "revs", query: decodeRevsQuery(q), withHostIds: claims.rights === "rw" }),
  versions: (q, claims) => ({ route: "versions", query: decodeVersionsQuery(q), withHostIds: claims.rights === "rw" }),
  activity: () => ({ route: "activity" }),
  file: (q) => ({ route: "file", query: decodeFileQuery(q) }),
};

for (const [route, decode] of Object.entries(DECODERS)) {
  browseRoutes.get(`/v1/workspaces/:ws/${route}`, async (c) => {
    const ws = c.req.param("ws");
    const stub = workspaceStub(c.env, ws);
    const claims = authorize(c.req.header("authorization"), c.env.FERRY_SECRET, ws, false);
    const request = decode(new URL(c.req.url).searchParams, claims);
    return stub.browse(request);
  });
}

browseRoutes.get("/v1/workspaces/:ws/read-token", (c) => {
  const ws = c.req.param("ws");
  workspaceStub(c.env, ws);
  const claims = authorize(c.req.header("authorization"), c.env.FERRY_SECRET, ws, false);
  const ttl = decodeReadTokenTtl(new URL(c.req.url).searchParams);
  const exp = Math.min(claims.exp, Math.floor(Date.now() / 1000) + ttl);
  const token = signToken({ ws, rights: "r", exp }, c.env.FERRY_SECRET as string);
  return c.json({ token, exp }, 200, { "cache-control": "no-store" });
});
