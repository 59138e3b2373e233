/**
 * A collection racing pushes (worker/sync/gc/collect.ts): whatever order
 * slices and pushes interleave in, no entry or retained version ever names
 * an object that is not stored. A push that names an object the sweep
 * already took is refused `missing_objects` (the host uploads it again);
 * one that commits first keeps it.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { encodeCbor } from "../../protocol/cbor.ts";
import { toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { DAY, danglingChunks, KEEP_NOTHING, storedHashes } from "./gc-support.ts";
import { callRaw, freshWorkspace, gone, smallFile, TestHost, type Workspace } from "./helpers.ts";

const FILES = 60;

/** FILES files pushed then deleted (their objects only in versions, past a zero window) and FILES stray uploads. */
async function garbage(ws: Workspace, host: TestHost): Promise<ObjectBlob[]> {
  const files = await Promise.all(Array.from({ length: FILES }, (_, i) => smallFile(`old/${i}`, `old file ${i}`)));
  await host.push(
    files.map((f) => f.entry),
    files.map((f) => f.object),
  );
  await host.push(files.map((f) => gone(f.entry.path)));
  const strays = await Promise.all(Array.from({ length: FILES }, (_, i) => smallFile(`stray/${i}`, `stray ${i}`)));
  await callRaw(ws, "putObjects", encodeCbor({ objects: strays.map((s) => s.object) }));
  return [...files.map((f) => f.object), ...strays.map((s) => s.object)];
}

function step(ws: Workspace): Promise<boolean> {
  return runInDurableObject(ws, (instance: WorkspaceObject) => instance.collector.step());
}

describe("a collection racing pushes", () => {
  it("never leaves an entry naming a deleted object, pushing between every slice", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const doomed = await garbage(ws, host);
    // Tiny slices (7 rows) so the run takes many steps, as of a day later with nothing retained.
    await runInDurableObject(ws, (instance: WorkspaceObject) =>
      instance.collector.start(KEEP_NOTHING, () => Date.now() + DAY, 7),
    );
    const outcomes = { applied: 0, missing: 0 };
    const revived: string[] = [];
    for (let i = 0; ; i++) {
      // A host whose `has` said the object was held names it without uploading it.
      const object = doomed[(i * 7) % doomed.length] as ObjectBlob;
      const entry = {
        kind: "file",
        path: `new/${i}`,
        mode: 0o644,
        mtime: 1,
        size: object.bytes.byteLength,
        chunks: [object.hash],
      } as const;
      const answer = await callRaw(ws, "push", encodeCbor(host.packRequest([entry])));
      if (answer.status === 200) {
        host.hostRev += 1;
        host.acked = (answer.body as { acked: TestHost["acked"] }).acked;
        outcomes.applied++;
        revived.push(toHex(object.hash));
      } else {
        expect((answer.body as { error: { code: string } }).error.code).toBe("missing_objects");
        outcomes.missing++;
      }
      expect(await danglingChunks(ws)).toEqual([]);
      if (await step(ws)) break;
    }
    // Both sides of the race happened: some pushes kept their object, some came too late.
    expect(outcomes.applied).toBeGreaterThan(0);
    expect(outcomes.missing).toBeGreaterThan(0);
    const held = await storedHashes(ws);
    for (const hex of revived) expect(held).toContain(hex);
    expect(await danglingChunks(ws)).toEqual([]);
  });

  it("never leaves an entry naming a deleted object when pushes run during a collection's yields", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const doomed = await garbage(ws, host);
    const collection = runInDurableObject(ws, (instance: WorkspaceObject) =>
      instance.collector.collectNow(KEEP_NOTHING, () => Date.now() + DAY),
    );
    const pushes = (async () => {
      for (let i = 0; i < 20; i++) {
        const object = doomed[i * 5] as ObjectBlob;
        const entry = {
          kind: "file",
          path: `new/${i}`,
          mode: 0o644,
          mtime: 1,
          size: object.bytes.byteLength,
          chunks: [object.hash],
        } as const;
        const answer = await callRaw(ws, "push", encodeCbor(host.packRequest([entry])));
        if (answer.status === 200) {
          host.hostRev += 1;
          host.acked = (answer.body as { acked: TestHost["acked"] }).acked;
        }
      }
    })();
    await Promise.all([collection, pushes]);
    expect(await danglingChunks(ws)).toEqual([]);
  });
});
