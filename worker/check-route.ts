/**
 * `GET /v1/workspaces/{ws}/check` (PROTOCOL.md §7.11): the storage check,
 * a page at a time. A read token is enough: it answers no bytes, and the
 * only thing it changes is the index's claim to bytes it found gone
 * (worker/sync/damaged.ts), which no token could make true again.
 */
import { Hono } from "hono";
import { type CheckPage, decodeCheckQuery } from "../protocol/check.ts";
import { ProtocolError } from "../protocol/errors.ts";
import { joinHashes } from "../protocol/hash.ts";
import { authorize } from "./auth.ts";
import type { Env } from "./env.ts";
import { checkPacks } from "./r2/check-packs.ts";
import { workspaceStub } from "./workspace-stub.ts";

export const checkRoutes = new Hono<{ Bindings: Env }>();

checkRoutes.get("/v1/workspaces/:ws/check", async (c) => {
  const ws = c.req.param("ws");
  const stub = workspaceStub(c.env, ws);
  authorize(c.req.header("authorization"), c.env.FERRY_SECRET, ws, false);
  const query = decodeCheckQuery(new URL(c.req.url).searchParams);
  if ("field" in query) throw new ProtocolError("bad_request", `${query.field}: not a valid value`, query);
  const { remote, ...local } = await stub.check(query.deep, query.after);
  // Packs in R2 are checked here, where the bucket is (worker/r2/check-packs.ts).
  const far = await checkPacks(c.env.PACKS, remote, query.deep);
  // What the bucket showed damaged is forgotten by the object (worker/sync/damaged.ts), as its own finds are.
  if (far.found.length > 0) {
    await stub.forgetDamaged(
      joinHashes(far.found.map((f) => f.hash)),
      far.found.map((f) => f.pack),
    );
  }
  const page: CheckPage = {
    workspace: ws,
    deep: query.deep,
    ...local,
    hashedBytes: local.hashedBytes + far.hashedBytes,
    problems: [...local.problems, ...far.problems],
  };
  return c.json(page, 200, { "cache-control": "no-store" });
});
