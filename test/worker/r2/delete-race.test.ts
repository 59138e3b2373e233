/**
 * An upload or push racing `DELETE /v1/workspaces/{ws}` with R2 bound
 * (PROTOCOL.md §7.9, §7.10): its packs were written for the deleted
 * history, so it records nothing in the new, empty one, and leaves no pack
 * in the bucket that nothing would ever delete. The Worker's own steps run
 * here, with the deletion slipped between them.
 */
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { encodeRequest } from "../../../protocol/ops.ts";
import { signToken } from "../../../protocol/token.ts";
import { bucketStore } from "../../../worker/r2/bucket-store.ts";
import { pushThroughPacks } from "../../../worker/r2/push-route.ts";
import { objectIndex } from "../../../worker/r2/upload-route.ts";
import { type IngestIndex, ingestObjects } from "../../../worker/sync/r2-ingest.ts";
import { bucket, call, freshName, keysOf, objects, pushOfOne, rows, stubOf } from "./support.ts";

async function deleteWorkspace(ws: string): Promise<void> {
  const token = signToken({ ws, rights: "rw", exp: Math.floor(Date.now() / 1000) + 600 }, env.FERRY_SECRET as string);
  const res = await SELF.fetch(`http://ferry.test/v1/workspaces/${ws}?confirm=${ws}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
}

/** The object's index as the Worker asks it, with `before` run before the step named. */
function racedIndex(ws: string, step: "write" | "record", before: () => Promise<void>): IngestIndex {
  const index = objectIndex(stubOf(ws));
  return {
    probe: async (hashes) => {
      const answer = await index.probe(hashes);
      if (step === "write") await before();
      return answer;
    },
    record: async (upload) => {
      if (step === "record") await before();
      return index.record(upload);
    },
  };
}

/** What the new history holds: nothing, and the bucket nothing under the workspace's prefix. */
async function expectNothingLeft(ws: string): Promise<void> {
  expect(await rows(ws, `SELECT count(*) AS n FROM objects`)).toEqual([{ n: 0 }]);
  expect(await rows(ws, `SELECT count(*) AS n FROM packs`)).toEqual([{ n: 0 }]);
  expect(await keysOf(ws)).toEqual([]);
}

describe("an upload racing the workspace's deletion", () => {
  for (const step of ["write", "record"] as const) {
    it(`is refused, records nothing in the new history and leaves no pack, deleted before its ${step}`, async () => {
      const ws = freshName();
      await call(ws, "putObjects", { objects: await objects(2, 40_000) });
      const index = racedIndex(ws, step, () => deleteWorkspace(ws));
      const outcome = await ingestObjects(bucketStore(bucket(), ws, true), index, await objects(3, 50_000)).catch(
        (e: unknown) => e,
      );
      expect(outcome).toMatchObject({ code: "unavailable" });
      await expectNothingLeft(ws);
    });
  }

  it("is a push refused, committing and recording nothing, its packs deleted", async () => {
    // A host new to the workspace (one of the deleted history is refused workspace_deleted at push).
    const ws = freshName();
    const hostId = new Uint8Array(16).fill(7);
    // Past SMALL_PUSH_BYTES: a smaller push's objects would go to the object whole, not to R2 first.
    const [object] = await objects(1, 100_000);
    if (object === undefined) throw new Error("one object");
    const stub = stubOf(ws);
    // The object as the push route calls it, the workspace deleted just before the push reaches it.
    const raced = {
      probeObjects: (h: Parameters<typeof stub.probeObjects>[0]) => stub.probeObjects(h),
      pushWithPacks: async (...args: Parameters<typeof stub.pushWithPacks>) => {
        await deleteWorkspace(ws);
        return stub.pushWithPacks(...args);
      },
    } as unknown as typeof stub;
    const body = encodeRequest("push", pushOfOne(hostId, object));
    const res = await pushThroughPacks({
      bucket: bucket(),
      workspace: ws,
      stub: raced,
      body: new Blob([body]).stream(),
      declared: body.byteLength,
      rights: "rw",
    });
    expect(res.status).toBe(503);
    expect(await rows(ws, `SELECT count(*) AS n FROM entries`)).toEqual([{ n: 0 }]);
    await expectNothingLeft(ws);
  });
});
