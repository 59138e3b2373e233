/**
 * Reads store nothing (PROTOCOL.md §7, worker/do/creation.ts): every read
 * route of a workspace no one ever wrote, whatever the token, answers as an
 * empty workspace and leaves its object's storage without a table; the
 * first write makes the storage, with the epoch the reads answered.
 */
import { runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CBOR_CONTENT_TYPE, decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { toHex } from "../../protocol/hash.ts";
import type { Rights } from "../../protocol/token.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { BASE, freshName, openSocket, stubOf, tokenFor } from "./ws-client.ts";

const HOST = new Uint8Array(16).fill(9);
const helloBody = (extra: Record<string, unknown> = {}) => ({
  version: PROTOCOL_VERSION,
  hostId: HOST,
  hostRev: 0,
  ...extra,
});
const HASHES = new Uint8Array(64).fill(3);

/** The tables the object's SQLite holds, as the object itself sees them. */
function tablesOf(name: string): Promise<string[]> {
  return runInDurableObject(stubOf(name), (_: WorkspaceObject, state) =>
    [...state.storage.sql.exec<{ name: string }>(`SELECT name FROM sqlite_master`)].map((r) => r.name),
  );
}

async function get(name: string, route: string, rights: Rights): Promise<Response> {
  return SELF.fetch(`${BASE}/${name}/${route}`, { headers: { authorization: `Bearer ${tokenFor(name, rights)}` } });
}

async function post(
  name: string,
  route: string,
  body: unknown,
  rights: Rights,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await SELF.fetch(`${BASE}/${name}/${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokenFor(name, rights)}`, "content-type": CBOR_CONTENT_TYPE },
    body: encodeCbor(body),
  });
  return { status: res.status, body: decodeCbor(new Uint8Array(await res.arrayBuffer())) as Record<string, unknown> };
}

/** Every read route once, over HTTP, with `rights`: each answer's status and body. */
async function readEverything(
  name: string,
  rights: Rights,
): Promise<Record<string, { status: number; body: unknown }>> {
  const answers: Record<string, { status: number; body: unknown }> = {};
  for (const route of [
    "stats",
    "tree",
    "revs",
    "file?path=a.txt",
    "versions?path=a.txt",
    "activity",
    "check",
    "check?deep=1",
  ]) {
    const res = await get(name, route, rights);
    answers[route] = { status: res.status, body: await res.json() };
  }
  // A read-write token's hello records its host (a write), unless it is a look.
  answers.hello = await post(name, "hello", helloBody(rights === "r" ? { label: "first" } : { look: true }), rights);
  answers.has = await post(name, "has", { hashes: HASHES }, rights);
  answers.getObjects = await post(name, "objects/get", { hashes: HASHES }, rights);
  answers.changes = await post(name, "changes", { after: { rev: 0, path: null } }, rights);
  answers.log = await post(name, "log", {}, rights);
  answers.snapshot = await post(name, "snapshot", { rev: 0 }, rights);
  return answers;
}

describe("a workspace never written", () => {
  for (const rights of ["r", "rw"] as const) {
    it(`answers every read route as an empty workspace and stores nothing (${rights} token)`, async () => {
      const name = freshName("never");
      const answers = await readEverything(name, rights);
      expect(await tablesOf(name)).toEqual([]);
      expect(answers.stats).toMatchObject({ status: 200, body: { workspace: name, rev: 0, files: 0, hostCount: 0 } });
      expect(answers.tree).toMatchObject({ status: 200, body: { dir: "", children: [], next: null } });
      expect(answers["file?path=a.txt"]).toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
      expect(answers.check).toMatchObject({ status: 200, body: { objects: 0, packs: 0, problems: [], next: null } });
      expect(answers.hello).toMatchObject({
        status: 200,
        body: { rev: 0, acked: { rev: 0, path: null }, resync: false },
      });
      expect(answers.has?.body).toEqual({ have: new Uint8Array(2) });
      expect(answers.getObjects?.body).toMatchObject({ objects: [] });
      expect(answers.changes).toMatchObject({ status: 200, body: { entries: [] } });
      for (const [route, { status }] of Object.entries(answers)) {
        if (route !== "file?path=a.txt") expect(status, route).toBe(200);
      }
    });
  }

  it("answers a socket's reads as an empty workspace and stores nothing but its expiry alarm", async () => {
    const name = freshName("never-socket");
    const socket = await openSocket(name, "rw");
    expect(await socket.ok("hello", helloBody({ look: true }))).toMatchObject({ rev: 0 });
    expect(await socket.ok("changes", { after: { rev: 0, path: null } })).toMatchObject({ entries: [] });
    expect(await socket.ok("has", { hashes: HASHES })).toEqual({ have: new Uint8Array(2) });
    socket.ws.close();
    // The socket's token expiry is the alarm's (worker/do/pokes.ts), which workerd keeps in its own table.
    expect(await tablesOf(name)).toEqual(["_cf_METADATA"]);
  });

  it("refuses a read token's push and stores nothing", async () => {
    const name = freshName("never-push");
    const push = { hostId: HOST, start: { rev: 0, path: null }, end: { rev: 1, path: null }, entries: [] };
    expect((await post(name, "push", push, "r")).status).toBe(403);
    expect(await tablesOf(name)).toEqual([]);
  });

  it("is made by a read-write hello, which records its host, under the epoch a look answered before it", async () => {
    const name = freshName("first-hello");
    const look = await post(name, "hello", helloBody({ look: true }), "rw");
    expect(await tablesOf(name)).toEqual([]);
    const hello = await post(name, "hello", helloBody({ label: "first" }), "rw");
    expect(hello.body).toMatchObject({ rev: 0, label: "first" });
    expect(toHex(hello.body.epoch as Uint8Array)).toBe(toHex(look.body.epoch as Uint8Array));
    expect(await tablesOf(name)).toContain("hosts");
    const stats = (await (await get(name, "stats", "r")).json()) as { hostCount: number };
    expect(stats.hostCount).toBe(1);
  });

  it("is made by its first push, under the epoch hello answered before it", async () => {
    const name = freshName("first-push");
    const before = await post(name, "hello", helloBody({ label: "first" }), "r");
    expect(before.body).toMatchObject({ rev: 0 });
    const again = await post(name, "hello", helloBody({ look: true }), "rw");
    expect(toHex(again.body.epoch as Uint8Array)).toBe(toHex(before.body.epoch as Uint8Array));
    const pulled = await post(name, "changes", { after: { rev: 0, path: null }, hostId: HOST }, "rw");
    expect(pulled.body).toMatchObject({ entries: [] });
    expect(await tablesOf(name)).toEqual([]);
    const dir = { path: "docs", kind: "dir", mode: 0o755, mtime: 1 };
    const push = { hostId: HOST, start: { rev: 0, path: null }, end: { rev: 1, path: null }, entries: [dir] };
    expect(await post(name, "push", push, "rw")).toMatchObject({ status: 200, body: { rev: 1, applied: true } });
    expect(await tablesOf(name)).toContain("meta");
    const pull = { epoch: before.body.epoch, cursor: { rev: 0, path: null } };
    const after = await post(name, "hello", helloBody({ hostRev: 1, pull, label: "first" }), "rw");
    expect(after.body).toMatchObject({ rev: 1, resync: false, acked: { rev: 1, path: null }, label: "first" });
    expect(toHex(after.body.epoch as Uint8Array)).toBe(toHex(before.body.epoch as Uint8Array));
    const stats = (await (await get(name, "stats", "rw")).json()) as { dirs: number; hostCount: number };
    expect(stats).toMatchObject({ dirs: 1, hostCount: 1 });
  });
});
