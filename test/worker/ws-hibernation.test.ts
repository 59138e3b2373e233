import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORIGIN } from "../../protocol/cursor.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { helloRequest, pushEntryMap, randomId, smallFile } from "./helpers.ts";
import { freshName, openSocket, stubOf } from "./ws-client.ts";

/** Marks the live instance, so a test can tell that a later one is new. */
const instances = new WeakSet<WorkspaceObject>();

async function evict(name: string): Promise<void> {
  const stub = stubOf(name);
  await runInDurableObject(stub, (instance: WorkspaceObject) => {
    instances.add(instance);
  });
  await evictDurableObject(stub);
  const fresh = await runInDurableObject(stub, (instance: WorkspaceObject) => !instances.has(instance));
  expect(fresh).toBe(true);
}

describe("sync socket across eviction", () => {
  it("answers the next frame after the object is evicted between two frames, with the same rights", async () => {
    const name = freshName("hib");
    const writer = await openSocket(name, "rw");
    const reader = await openSocket(name, "r");
    const host = randomId();
    await writer.ok("hello", helloRequest(host));
    await reader.ok("hello", helloRequest(randomId()));

    await evict(name);

    const file = await smallFile("after-eviction.txt", "still here\n");
    const pushed = await writer.ok("push", {
      hostId: host,
      start: ORIGIN,
      end: { rev: 1, path: null },
      entries: [pushEntryMap(file.entry)],
      objects: [file.object],
    });
    expect(pushed.applied).toBe(true);
    // The reader's rights and identity came back from its attachment: poked, and still read-only.
    await reader.until(() => reader.pokes.length > 0, 2000, "poke after eviction");
    expect(reader.pokes).toEqual([1]);
    expect(writer.pokes).toEqual([]);
    const refused = await reader.request("putObjects", { objects: [file.object] });
    expect(refused.error?.code).toBe("forbidden");
    expect((await reader.ok("changes", { after: ORIGIN })).rev).toBe(1);
  });

  it("keeps the bad-frame count across eviction", async () => {
    const name = freshName("hib");
    const s = await openSocket(name);
    for (let i = 0; i < 10; i++) s.sendRaw(new Uint8Array([0xff]));
    await s.until(() => (s.answers.get(null)?.length ?? 0) === 10, 2000, "ten refusals");
    await evict(name);
    for (let i = 0; i < 6; i++) s.sendRaw(new Uint8Array([0xff]));
    expect((await s.waitClosed()).code).toBe(1008);
  });
});
