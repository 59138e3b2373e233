/**
 * The Worker: routing, auth and error mapping, then a hand-off to the
 * workspace's object by name. Everything about sync lives in the object.
 */
import { Hono } from "hono";
import { version as SERVER_VERSION } from "../package.json";
import { READ_ROUTES } from "../protocol/browse.ts";
import { CBOR_CONTENT_TYPE, encodeCbor } from "../protocol/cbor.ts";
import { errorsInCbor, ProtocolError } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import { OPS, opOfRoute } from "../protocol/ops.ts";
import type { StatsAnswer } from "../protocol/stats.ts";
import { PROTOCOL_VERSION } from "../protocol/version.ts";
import { authorize, isOperatorToken, socketCredentials } from "./auth.ts";
import { checkDeclaredLength, dropBody } from "./body.ts";
import { browseRoutes } from "./browse-routes.ts";
import { checkRoutes } from "./check-route.ts";
import { httpAnswerRoom } from "./do/answer-room.ts";
import { RETRY_AFTER_MS } from "./do/inflight.ts";
import { requestCame } from "./do/reclaim.ts";
import { upgradeFor } from "./do/socket.ts";
import { withinBudget } from "./do/worker-budget.ts";
import type { Env } from "./env.ts";
import { pageRoutes } from "./page/routes.ts";
import { uploadBucket } from "./r2/bucket-store.ts";
import { deletePacks } from "./r2/delete-packs.ts";
import { downloadFromPacks } from "./r2/download-route.ts";
import { pushThroughPacks } from "./r2/push-route.ts";
import { uploadToPacks } from "./r2/upload-route.ts";
import { readRetention } from "./sync/retention.ts";
import { checkWorkspaceName, workspaceSegment, workspaceStub } from "./workspace-stub.ts";

export const app = new Hono<{ Bindings: Env }>();

/**
 * A workspace's name is checked before its route and method (PROTOCOL.md §2.1): every path under
 * `/v1/workspaces/` whose name breaks the rule (an encoded `/`, a NUL, empty, too long) is
 * `400 invalid_workspace` whatever follows it, never a 404 or 405 for a route it seemed to name.
 */
app.use("*", async (c, next) => {
  requestCame(); // paces collections by requests too (worker/do/reclaim.ts)
  const name = workspaceSegment(c.req.path);
  if (name !== null) checkWorkspaceName(name);
  await next();
});

app.route("/", pageRoutes);

/**
 * Liveness and where bytes go (`packs`) for anyone; the storage directory (set by `ferry serve` on a
 * loopback address only) only for a read-write token that covers every
 * workspace: a local path says more about the host than anyone else needs.
 */
app.get("/v1/health", (c) => {
  // Where new object bytes go: R2 packs when wrangler.toml's bucket is bound (not with `ferry serve --no-r2`)
  // and FERRY_PACKS is not `sqlite` (worker/env.ts).
  const packs = uploadBucket(c.env) === undefined ? "sqlite" : "r2";
  const health = { ok: true, version: PROTOCOL_VERSION, server: SERVER_VERSION, packs };
  const storage = c.env.FERRY_STORAGE;
  if (storage === undefined || !isOperatorToken(c.req.header("authorization"), c.env.FERRY_SECRET)) {
    return c.json(health);
  }
  return c.json({ ...health, storage });
});

app.get("/v1/workspaces/:ws/stats", async (c) => {
  const ws = c.req.param("ws");
  const stub = workspaceStub(c.env, ws);
  const claims = authorize(c.req.header("authorization"), c.env.FERRY_SECRET, ws, false);
  const packs = uploadBucket(c.env) === undefined ? "sqlite" : "r2";
  const [stats, ingestedByObject] = await Promise.all([stub.stats(claims.rights === "rw"), stub.ingestCount()]);
  const answer: StatsAnswer = { workspace: ws, packs, ingestedByObject, ...stats };
  return c.json(answer);
});

// Admin: a whole garbage collection now (tests, operators). Read-write; JSON like stats.
app.post("/v1/workspaces/:ws/gc", async (c) => {
  const ws = c.req.param("ws");
  const stub = workspaceStub(c.env, ws);
  authorize(c.req.header("authorization"), c.env.FERRY_SECRET, ws, true);
  const retention = readRetention(c.env);
  if (retention instanceof ProtocolError) throw retention;
  const { startedAt, endedAt, rev, freed, nextDueAt } = await stub.collect();
  return c.json({ workspace: ws, startedAt, endedAt, rev, nextDueAt, freed });
});

// Admin: deletes every row and object of the workspace. Read-write, and
// `?confirm=<ws>` must name it, so a stray request cannot.
app.delete("/v1/workspaces/:ws", async (c) => {
  const ws = c.req.param("ws");
  const stub = workspaceStub(c.env, ws);
  authorize(c.req.header("authorization"), c.env.FERRY_SECRET, ws, true);
  if (c.req.query("confirm") !== ws) {
    throw new ProtocolError("bad_request", `deleting a workspace needs ?confirm=${ws}`, { field: "confirm" });
  }
  const history = await stub.deleteWorkspace();
  // The index first, then the bytes it named: every pack but the new history's (PROTOCOL.md §7.9, §7.10).
  if (c.env.PACKS !== undefined) await deletePacks(c.env.PACKS, ws, history);
  return c.json({ workspace: ws, deleted: true });
});

app.get("/v1/workspaces/:ws/sync", async (c) => {
  const ws = c.req.param("ws");
  const stub = workspaceStub(c.env, ws);
  const credentials = socketCredentials(c.req.header("authorization"), c.req.header("sec-websocket-protocol"));
  const claims = authorize(credentials.authorization, c.env.FERRY_SECRET, ws, false);
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ProtocolError("bad_request", "expected a WebSocket upgrade");
  }
  // The object accepts the socket and keeps the rights with it for every frame,
  // and closes it (4401) when the token expires (worker/do/socket.ts).
  const accepted = await stub.fetch(upgradeFor(c.req.raw, claims.rights, claims.exp));
  if (credentials.protocol === null || accepted.webSocket === null) return accepted;
  // A browser fails the handshake unless the server names one of the subprotocols it offered.
  return new Response(null, {
    status: accepted.status,
    webSocket: accepted.webSocket,
    headers: { "sec-websocket-protocol": credentials.protocol },
  });
});

app.route("/", browseRoutes);
app.route("/", checkRoutes);

app.post("/v1/workspaces/:ws/*", async (c) => {
  const ws = c.req.param("ws");
  const route = c.req.path.slice(`/v1/workspaces/${ws}/`.length);
  const op = opOfRoute(route);
  if (op === undefined) return wrongRoute(c.req.method, c.req.path);
  const stub = workspaceStub(c.env, ws);
  const claims = authorize(c.req.header("authorization"), c.env.FERRY_SECRET, ws, OPS[op].writes);
  const type = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== CBOR_CONTENT_TYPE) {
    throw new ProtocolError("unsupported_media_type", `expected ${CBOR_CONTENT_TYPE}`, { contentType: type ?? "" });
  }
  checkDeclaredLength(c.req.raw, LIMITS.maxBodyBytes);
  // The body goes to the object as a stream and the object's answer comes back as a Response:
  // byte arrays across this call cost the object's workerd far more CPU (worker/do/workspace.ts).
  const declared = Number(c.req.header("content-length") ?? Number.NaN);
  const call = {
    workspace: ws,
    stub,
    body: c.req.raw.body,
    declared: Number.isSafeInteger(declared) ? declared : undefined,
    rights: claims.rights,
  };
  const bucket = uploadBucket(c.env);
  const packs = c.env.PACKS;
  // Whose turn it is in the process budget's line is taken by workspace (inflight.ts), named as its object names itself.
  const from = stub.id.toString();
  // With a bucket, an upload's bytes (and a push's inline objects) go to R2 from here and the object only
  // records them; a download's come from R2 here, the object answering where they are (worker/r2/, §7.9).
  // The Worker reads those bodies itself, so they take their turn at the process budget here, as the
  // object's do in its serve (worker/do/inflight.ts).
  if (op === "putObjects" && bucket !== undefined) {
    return withinBudget(call.declared, 0, from, (reservation) => uploadToPacks({ ...call, bucket, reservation }));
  }
  if (op === "push" && bucket !== undefined) {
    return withinBudget(call.declared, 0, from, (reservation) => pushThroughPacks({ ...call, bucket, reservation }));
  }
  if (op === "getObjects" && packs !== undefined) {
    return withinBudget(call.declared, httpAnswerRoom(op), from, (reservation) =>
      downloadFromPacks({ ...call, bucket: packs, reservation }),
    );
  }
  return stub.serve(op, call.body, call.rights, call.declared);
});

/** A route no handler above answers for this method: 405 with `Allow` where the route exists, else 404. */
app.all("*", (c) => wrongRoute(c.req.method, c.req.path));

app.notFound((c) => errorResponse(new ProtocolError("not_found", `no route ${c.req.path}`), c.req.method, c.req.path));

app.onError(async (err, c) => {
  if (err instanceof ProtocolError) {
    // Its body read first, so that a client still sending it gets the answer (body.ts dropBody); not for
    // the refusals whose point is to read no more of it.
    if (err.code !== "payload_too_large" && err.code !== "rate_limited") await dropBody(c.req.raw, LIMITS.maxBodyBytes);
    return errorResponse(err, c.req.method, c.req.path);
  }
  console.error("ferry: unhandled error", err);
  return errorResponse(new ProtocolError("internal", "internal error"), c.req.method, c.req.path);
});

function wrongRoute(method: string, path: string): Response {
  const allow = allowedMethods(path);
  if (allow === null) return errorResponse(new ProtocolError("not_found", `no route ${path}`), method, path);
  const refusal = new ProtocolError("method_not_allowed", `${method} is not allowed on ${path}: ${allow}`);
  const response = errorResponse(refusal, method, path);
  response.headers.set("allow", allow);
  return response;
}

/** Routes under a workspace that answer GET: stats, the socket, the storage check and the read routes. */
const GET_ROUTES = new Set<string>(["stats", "sync", "check", ...READ_ROUTES]);

/**
 * The methods a route answers (PROTOCOL.md §5), for 405's `Allow` header; null
 * for a path that is no route. Every GET route answers HEAD too (Hono does).
 */
function allowedMethods(path: string): string | null {
  if (path === "/" || path === "/v1/health" || /^\/(w|page)\/[^/]+$/.test(path)) return "GET, HEAD";
  const match = /^\/v1\/workspaces\/[^/]+(?:\/(.+))?$/.exec(path);
  if (match === null) return null;
  const route = match[1];
  if (route === undefined) return "DELETE";
  if (opOfRoute(route) !== undefined || route === "gc") return "POST";
  return GET_ROUTES.has(route) ? "GET, HEAD" : null;
}

/** In CBOR or JSON by the route (protocol/errors.ts errorsInCbor). */
function errorResponse(err: ProtocolError, method: string, path: string): Response {
  const wire = err.toWire();
  const headers: Record<string, string> =
    err.code === "rate_limited" ? { "retry-after": String(RETRY_AFTER_MS / 1000) } : {};
  if (errorsInCbor(method, path)) {
    return new Response(encodeCbor(wire), {
      status: err.status,
      headers: { ...headers, "content-type": CBOR_CONTENT_TYPE },
    });
  }
  return Response.json(wire, { status: err.status, headers });
}
