/**
 * A push carrying its objects inline with R2 bound (worker/r2/push-route.ts):
 * the Worker puts them in R2 and records them before the object applies
 * the push, so the object commits a push whose chunks the index holds and
 * never stores their bytes; a forged object refuses the push whole.
 */
import { describe, expect, it } from "vitest";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import { PROTOCOL_VERSION } from "../../../protocol/version.ts";
import { call, freshName, keysOf, objects, pushOfOne, rows } from "./support.ts";

async function pushOne(ws: string, object: ObjectBlob): Promise<{ status: number; body: unknown }> {
  const hostId = new Uint8Array(16).fill(5);
  await call(ws, "hello", { version: PROTOCOL_VERSION, hostId, hostRev: 0 });
  return call(ws, "push", pushOfOne(hostId, object));
}

describe("a push with inline objects and R2 bound", () => {
  it("commits with its objects in an R2 pack, none in the object's SQLite", async () => {
    const ws = freshName();
    const [object] = await objects(1, 30_000);
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
    const [object] = await objects(1, 30_000);
    const forged = { hash: (object as ObjectBlob).hash, bytes: new Uint8Array(30_000).fill(3) };
    const res = await pushOne(ws, forged);
    expect((res.body as { error: { code: string } }).error.code).toBe("hash_mismatch");
    expect(await rows(ws, `SELECT path FROM entries`)).toEqual([]);
    expect(await keysOf(ws)).toEqual([]);
  });
});
