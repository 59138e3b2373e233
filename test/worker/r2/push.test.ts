/**
 * A push carrying its objects inline with R2 bound (worker/r2/push-route.ts):
 * the Worker puts them in R2 and records them before the object applies
 * the push, so the object commits a push whose chunks the index holds and
 * never stores their bytes; a forged object refuses the push whole. A small
 * push (SMALL_PUSH_BYTES), over HTTP or in a socket frame, keeps its
 * objects in the object's SQLite until a collection moves them to R2.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import { HTTP_UPLOADS, PROTOCOL_VERSION, SMALL_PUSH_BYTES } from "../../../protocol/version.ts";
import type { WorkspaceObject } from "../../../worker/do/workspace.ts";
import { openSocket } from "../ws-client.ts";
import { call, freshName, keysOf, objects, pushOfOne, rows, stubOf } from "./support.ts";

/** Past SMALL_PUSH_BYTES: a push of it puts its object in R2. */
const LARGE = SMALL_PUSH_BYTES + 1;

/** Packs whose bytes are in the object's SQLite. */
function sqlitePacks(ws: string) {
  return rows(ws, `SELECT count(*) AS n FROM packs WHERE bytes IS NOT NULL`);
}

async function readBack(ws: string, object: ObjectBlob): Promise<Uint8Array | undefined> {
  const got = (await call(ws, "getObjects", { hashes: [object.hash] })).body as { objects: ObjectBlob[] };
  return got.objects[0]?.bytes;
}

async function pushOne(ws: string, object: ObjectBlob): Promise<{ status: number; body: unknown }> {
  const hostId = new Uint8Array(16).fill(5);
  await call(ws, "hello", { version: PROTOCOL_VERSION, hostId, hostRev: 0 });
  return call(ws, "push", pushOfOne(hostId, object));
}

describe("a push with inline objects and R2 bound", () => {
  it("commits with its objects in an R2 pack, none in the object's SQLite", async () => {
    const ws = freshName();
    const [object] = await objects(1, LARGE);
    const res = await pushOne(ws, object as ObjectBlob);
    expect(res.status).toBe(200);
    expect(await rows(ws, `SELECT path FROM entries`)).toEqual([{ path: "a.bin" }]);
    expect(await keysOf(ws)).toHaveLength(1);
    expect(await rows(ws, `SELECT count(*) AS n FROM packs WHERE bytes IS NOT NULL`)).toEqual([{ n: 0 }]);
    const got = (await call(ws, "getObjects", { hashes: [object?.hash] })).body as { objects: ObjectBlob[] };
    expect(got.objects[0]?.bytes).toEqual(object?.bytes);
  });

  it("refuses a push whose inline object is not its hash, committing and writing nothing", async () => {
    const ws = freshName();
    const [object] = await objects(1, LARGE);
    const forged = { hash: (object as ObjectBlob).hash, bytes: new Uint8Array(LARGE).fill(3) };
    const res = await pushOne(ws, forged);
    expect((res.body as { error: { code: string } }).error.code).toBe("hash_mismatch");
    expect(await rows(ws, `SELECT path FROM entries`)).toEqual([]);
    expect(await keysOf(ws)).toEqual([]);
  });

  it("keeps a small push's objects in the object's SQLite, writing nothing to R2, until a collection moves them", async () => {
    const ws = freshName();
    const [object] = await objects(1, SMALL_PUSH_BYTES);
    expect((await pushOne(ws, object as ObjectBlob)).status).toBe(200);
    expect(await rows(ws, `SELECT path FROM entries`)).toEqual([{ path: "a.bin" }]);
    expect(await keysOf(ws)).toEqual([]);
    expect(await sqlitePacks(ws)).toEqual([{ n: 1 }]);
    expect(await readBack(ws, object as ObjectBlob)).toEqual(object?.bytes);

    await runInDurableObject(stubOf(ws), (o: WorkspaceObject) =>
      o.collector.collectNow({ historyMs: 0, graceMs: 0, horizonMs: 0, packGraceMs: 0 }),
    );
    expect(await keysOf(ws)).toHaveLength(1);
    expect(await sqlitePacks(ws)).toEqual([{ n: 0 }]);
    expect(await readBack(ws, object as ObjectBlob)).toEqual(object?.bytes);
  });

  it("keeps a small push in a socket frame in SQLite, from a host that lists http-uploads", async () => {
    const ws = freshName();
    const hostId = new Uint8Array(16).fill(6);
    const [small, large] = [(await objects(1, 500))[0], (await objects(1, LARGE))[0]] as ObjectBlob[];
    const socket = await openSocket(ws);
    try {
      await socket.ok("hello", { version: PROTOCOL_VERSION, hostId, hostRev: 2, capabilities: [HTTP_UPLOADS] });
      await socket.ok("push", pushOfOne(hostId, small as ObjectBlob));
      expect(await keysOf(ws)).toEqual([]);
      expect(await sqlitePacks(ws)).toEqual([{ n: 1 }]);
      expect(await stubOf(ws).ingestCount()).toBe(0);
      // A larger one in a frame still goes to R2, by the object (a host that sends it there all the same).
      const second = pushOfOne(hostId, large as ObjectBlob);
      const entries = second.entries.map((e) => ({ ...e, path: "b.bin" }));
      await socket.ok("push", { ...second, entries, start: second.end, end: { rev: 2, path: null } });
      expect(await keysOf(ws)).toHaveLength(1);
      expect(await stubOf(ws).ingestCount()).toBe(1);
    } finally {
      socket.ws.close();
    }
  });
});
