import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CBOR_CONTENT_TYPE, decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { signToken } from "../../protocol/token.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import { hostTag } from "../../worker/sync/host-tag.ts";

const BASE = "http://ferry.test/v1/workspaces";
const now = () => Math.floor(Date.now() / 1000);
const token = (ws: string, rights: "r" | "rw" = "rw", exp = now() + 600, secret = env.FERRY_SECRET as string) =>
  signToken({ ws, rights, exp }, secret);

let counter = 0;
const freshWorkspace = () => `auth-${Date.now()}-${counter++}`;

function hello(): Uint8Array {
  return encodeCbor({ version: PROTOCOL_VERSION, hostId: new Uint8Array(16).fill(7), hostRev: 0 });
}

async function post(ws: string, route: string, body: BodyInit | null, headers: Record<string, string> = {}) {
  return SELF.fetch(`${BASE}/${ws}/${route}`, {
    method: "POST",
    headers: { "content-type": CBOR_CONTENT_TYPE, ...headers },
    body,
  });
}

async function errorCode(res: Response): Promise<string> {
  const body = decodeCbor(new Uint8Array(await res.arrayBuffer())) as { error: { code: string } };
  return body.error.code;
}

const emptyPush = () =>
  encodeCbor({ hostId: new Uint8Array(16), start: { rev: 0, path: null }, end: { rev: 1, path: null }, entries: [] });

describe("auth", () => {
  it("refuses a request without a token with 401 unauthorized", async () => {
    const res = await post(freshWorkspace(), "hello", hello());
    expect(res.status).toBe(401);
    expect(await errorCode(res)).toBe("unauthorized");
  });

  it("refuses a token signed with another secret", async () => {
    const ws = freshWorkspace();
    const res = await post(ws, "hello", hello(), { authorization: `Bearer ${token(ws, "rw", now() + 600, "wrong")}` });
    expect(res.status).toBe(401);
    expect(await errorCode(res)).toBe("unauthorized");
  });

  it("refuses an expired token", async () => {
    const ws = freshWorkspace();
    const res = await post(ws, "hello", hello(), { authorization: `Bearer ${token(ws, "rw", now() - 1)}` });
    expect(res.status).toBe(401);
  });

  it("refuses a tampered payload", async () => {
    const ws = freshWorkspace();
    const [p, , s] = token(ws, "r").split(".");
    const forged = token(ws, "rw").split(".")[1];
    expect(forged).not.toBe(undefined);
    const res = await post(ws, "push", emptyPush(), { authorization: `Bearer ${p}.${forged}.${s}` });
    expect(res.status).toBe(401);
  });

  it("accepts one spelling of a token: another base64url spelling of the same bytes is refused", async () => {
    const ws = freshWorkspace();
    const good = token(ws);
    expect((await post(ws, "hello", hello(), { authorization: `Bearer ${good}` })).status).toBe(200);
    // A 32-byte signature is 43 characters; the last one's two low bits are padding, ignored by a lax decoder.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(good.slice(-1));
    for (const pad of [1, 2, 3]) {
      const respelled = good.slice(0, -1) + alphabet[last ^ pad];
      const res = await post(ws, "hello", hello(), { authorization: `Bearer ${respelled}` });
      expect([res.status, await errorCode(res)]).toEqual([401, "unauthorized"]);
    }
  });

  it("refuses a token for another workspace with 403 forbidden", async () => {
    const res = await post(freshWorkspace(), "hello", hello(), { authorization: `Bearer ${token("someone-else")}` });
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("forbidden");
  });

  it("accepts a prefix token for a workspace under the prefix only", async () => {
    const auth = { authorization: `Bearer ${token("team-*")}` };
    expect((await post(`team-${freshWorkspace()}`, "hello", hello(), auth)).status).toBe(200);
    expect((await post(`other-${freshWorkspace()}`, "hello", hello(), auth)).status).toBe(403);
  });

  it("records no host for a read-only token's hello, and shows it no host ids", async () => {
    const ws = freshWorkspace();
    const stats = async (rights: "r" | "rw") =>
      (await (
        await SELF.fetch(`${BASE}/${ws}/stats`, { headers: { authorization: `Bearer ${token(ws, rights)}` } })
      ).json()) as { hostCount: number; hosts: Record<string, unknown>[] };
    for (let i = 0; i < 3; i++) {
      const body = encodeCbor({
        version: PROTOCOL_VERSION,
        hostId: crypto.getRandomValues(new Uint8Array(16)),
        hostRev: 0,
      });
      expect((await post(ws, "hello", body, { authorization: `Bearer ${token(ws, "r")}` })).status).toBe(200);
    }
    expect((await stats("rw")).hostCount).toBe(0);
    expect((await post(ws, "hello", hello(), { authorization: `Bearer ${token(ws)}` })).status).toBe(200);
    expect((await stats("rw")).hosts.map((h) => h.id)).toEqual(["07".repeat(16)]);
    const seenByReader = await stats("r");
    expect([seenByReader.hostCount, seenByReader.hosts.length, seenByReader.hosts[0]]).toEqual([
      1,
      1,
      // Its tag (worker/sync/host-tag.ts) tells hosts apart; its id is not shown.
      { tag: hostTag(new Uint8Array(16).fill(7)), acked: { rev: 0, path: null }, lastSeen: expect.any(String) },
    ]);
  });

  it("lets a read-only token read but not push or upload", async () => {
    const ws = freshWorkspace();
    const auth = { authorization: `Bearer ${token(ws, "r")}` };
    expect((await post(ws, "hello", hello(), auth)).status).toBe(200);
    const push = await post(ws, "push", emptyPush(), auth);
    expect(push.status).toBe(403);
    expect(await errorCode(push)).toBe("forbidden");
    const upload = await post(ws, "objects", encodeCbor({ objects: [] }), auth);
    expect(upload.status).toBe(403);
  });

  it("protects stats and the sync socket too", async () => {
    const ws = freshWorkspace();
    expect((await SELF.fetch(`${BASE}/${ws}/stats`)).status).toBe(401);
    expect((await SELF.fetch(`${BASE}/${ws}/sync`, { headers: { upgrade: "websocket" } })).status).toBe(401);
  });
});

describe("http edge", () => {
  it("answers health with JSON, saying new bytes stay in SQLite when FERRY_PACKS says so", async () => {
    const res = await SELF.fetch("http://ferry.test/v1/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      ok: true,
      version: PROTOCOL_VERSION,
      server: expect.any(String),
      // This project binds the bucket and sets FERRY_PACKS=sqlite (vitest.worker.config.ts); test/worker/r2/mode.test.ts has "r2".
      packs: "sqlite",
    });
  });

  it("shows the storage directory in health only to a read-write token for every workspace", async () => {
    const health = (authorization?: string) =>
      SELF.fetch("http://ferry.test/v1/health", authorization ? { headers: { authorization } } : {}).then(
        (r) => r.json() as Promise<Record<string, unknown>>,
      );
    expect(await health()).not.toHaveProperty("storage");
    expect(await health(`Bearer ${token("some-workspace")}`)).not.toHaveProperty("storage");
    expect(await health("Bearer ferry1.forged.token")).not.toHaveProperty("storage");
    expect(await health(`Bearer ${token("*", "r")}`)).not.toHaveProperty("storage");
    expect(await health(`Bearer ${token("*")}`)).toMatchObject({ storage: "/srv/ferry-test-storage" });
  });

  it("refuses a workspace name that breaks the naming rule", async () => {
    for (const bad of ["-lead", ".hidden", "a%20b", "x".repeat(129)]) {
      const res = await post(bad, "hello", hello(), { authorization: `Bearer ${token("*")}` });
      expect(res.status, bad).toBe(400);
      expect(await errorCode(res)).toBe("invalid_workspace");
    }
  });

  it("refuses a body that is not CBOR with 415", async () => {
    const ws = freshWorkspace();
    const res = await post(ws, "hello", JSON.stringify({ version: 1 }), {
      authorization: `Bearer ${token(ws)}`,
      "content-type": "application/json",
    });
    expect(res.status).toBe(415);
    expect(await errorCode(res)).toBe("unsupported_media_type");
  });

  it("refuses a declared body over the limit with 413 before reading it", async () => {
    const ws = freshWorkspace();
    const res = await post(ws, "objects", new Uint8Array(17 * 1024 * 1024), { authorization: `Bearer ${token(ws)}` });
    expect(res.status).toBe(413);
    expect(await errorCode(res)).toBe("payload_too_large");
  });

  it("refuses a streamed body once it passes the limit", async () => {
    const ws = freshWorkspace();
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 20 * 1024 * 1024) return controller.close();
        sent += 1024 * 1024;
        controller.enqueue(new Uint8Array(1024 * 1024));
      },
    });
    const res = await post(ws, "objects", stream, { authorization: `Bearer ${token(ws)}` });
    expect(res.status).toBe(413);
  });

  it("answers an unknown route with 404 and a wrong method with 405", async () => {
    const ws = freshWorkspace();
    const auth = { authorization: `Bearer ${token(ws)}` };
    const unknown = await post(ws, "nope", hello(), auth);
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe("not_found");
    const wrongMethod = await SELF.fetch(`${BASE}/${ws}/push`, { headers: auth });
    expect(wrongMethod.status).toBe(405);
  });
});
