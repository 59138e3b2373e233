/**
 * objects/get with R2 bound (worker/r2/download-route.ts): the object
 * answers locations, the Worker reads the ranges from R2, and the host
 * gets what it always got: objects in request order under the byte bound,
 * and the hashes not held. Packs in SQLite (a workspace older than its
 * bucket) stay readable, alone or beside packs in R2.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sha256, toHex } from "../../../protocol/hash.ts";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import type { WorkspaceObject } from "../../../worker/do/workspace.ts";
import { storeObjects } from "../../../worker/sync/packs.ts";
import { call, freshName, MiB, objects, rows, stubOf } from "./support.ts";

type Answer = { objects: ObjectBlob[]; missing: Uint8Array[] };

async function get(ws: string, hashes: Uint8Array[], maxBytes?: number): Promise<Answer> {
  const res = await call(ws, "getObjects", maxBytes === undefined ? { hashes } : { hashes, maxBytes });
  expect(res.status).toBe(200);
  return res.body as Answer;
}

/** Each answered object's bytes hash to its name, and the names are `expected`, in order. */
async function expectObjects(answer: Answer, expected: readonly ObjectBlob[]): Promise<void> {
  expect(answer.objects.map((o) => toHex(o.hash))).toEqual(expected.map((o) => toHex(o.hash)));
  const digests = await Promise.all(answer.objects.map(async (o) => toHex(await sha256(o.bytes))));
  expect(digests).toEqual(expected.map((o) => toHex(o.hash)));
}

describe("a download with R2 bound", () => {
  it("answers objects of several packs in request order, with the hashes not held", async () => {
    const ws = freshName();
    const first = await objects(6, 300_000);
    const second = await objects(6, 300_000);
    await call(ws, "putObjects", { objects: first });
    await call(ws, "putObjects", { objects: second });
    expect(await rows(ws, `SELECT id FROM packs WHERE r2_key IS NOT NULL`)).toHaveLength(2);
    const unknown = (await objects(1, 100))[0] as ObjectBlob;
    const asked = [second[3], first[0], unknown, first[5], second[0], first[1]] as ObjectBlob[];
    const answer = await get(
      ws,
      asked.map((o) => o.hash),
    );
    await expectObjects(
      answer,
      asked.filter((o) => o !== unknown),
    );
    expect(answer.missing.map(toHex)).toEqual([toHex(unknown.hash)]);
  });

  it("stops before the byte bound, always answering at least one", async () => {
    const ws = freshName();
    const upload = await objects(4, MiB / 2);
    await call(ws, "putObjects", { objects: upload });
    const answer = await get(
      ws,
      upload.map((o) => o.hash),
      MiB + 1,
    );
    await expectObjects(answer, upload.slice(0, 2));
    await expectObjects(await get(ws, [upload[3]?.hash as Uint8Array], 10), [upload[3] as ObjectBlob]);
  });

  it("reads packs stored in SQLite before the bucket, alone and beside packs in R2", async () => {
    const ws = freshName();
    const old = await objects(3, 200_000);
    await runInDurableObject(stubOf(ws), (o: WorkspaceObject) => {
      o.creation.create();
      storeObjects(o.db, old, Date.now());
    });
    const fresh = await objects(3, 200_000);
    await call(ws, "putObjects", { objects: fresh });
    const where = await rows<{ r2: number }>(ws, `SELECT r2_key IS NOT NULL AS r2 FROM packs ORDER BY id`);
    expect(where).toEqual([{ r2: 0 }, { r2: 1 }]);
    await expectObjects(
      await get(
        ws,
        old.map((o) => o.hash),
      ),
      old,
    );
    const mixed = [old[0], fresh[0], old[2], fresh[2]] as ObjectBlob[];
    await expectObjects(
      await get(
        ws,
        mixed.map((o) => o.hash),
      ),
      mixed,
    );
  });
});
