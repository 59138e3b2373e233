/**
 * Pack compaction (worker/sync/gc/compact.ts), the collector on the alarm,
 * and the admin routes (`POST /gc`, `DELETE /v1/workspaces/{ws}`).
 */
import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";

import type { FileEntry } from "../../protocol/entry.ts";
import { joinHashes, sha256, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { signToken } from "../../protocol/token.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import { COLLECT_AFTER_WRITE_MS } from "../../worker/do/collector.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { COMPACT_BELOW } from "../../worker/sync/gc/compact.ts";
import { collect, DAY, danglingChunks, KEEP_NOTHING, usage } from "./gc-support.ts";
import { freshWorkspace, gone, ok, TestHost, type Workspace } from "./helpers.ts";

/** `count` files of `size` distinct bytes each, under `dir`. */
async function files(
  dir: string,
  count: number,
  size: number,
): Promise<{ entries: FileEntry[]; objects: ObjectBlob[] }> {
  const objects = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const bytes = new Uint8Array(size).fill(i % 251);
      new DataView(bytes.buffer).setUint32(0, i);
      new TextEncoder().encodeInto(dir, bytes.subarray(4));
      return { hash: await sha256(bytes), bytes };
    }),
  );
  const entries = objects.map(
    (o, i): FileEntry => ({ kind: "file", path: `${dir}/${i}`, mode: 0o644, mtime: 1, size, chunks: [o.hash] }),
  );
  return { entries, objects };
}

async function readBack(ws: Workspace, objects: readonly ObjectBlob[]): Promise<void> {
  for (let i = 0; i < objects.length; i += 50) {
    const want = objects.slice(i, i + 50);
    const hashes = joinHashes(want.map((o) => o.hash));
    const got = await ok(ws, "getObjects", { hashes });
    expect(got.missing).toEqual([]);
    const byHash = new Map(got.objects.map((o) => [toHex(o.hash), o.bytes]));
    for (const o of want.slice(0, got.objects.length)) expect(byHash.get(toHex(o.hash))).toEqual(o.bytes);
  }
}

describe("pack compaction", { timeout: 60_000 }, () => {
  it("rewrites packs whose live share fell below the threshold, and every kept object reads back", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    // 400 files of 8 KiB: about three 1 MiB packs.
    const tree = await files("t", 400, 8192);
    await host.push(tree.entries, tree.objects);
    // Delete two of every three: each pack keeps about a third of its bytes.
    await host.push(tree.entries.filter((_, i) => i % 3 !== 0).map((e) => gone(e.path)));
    const kept = tree.objects.filter((_, i) => i % 3 === 0);
    const run = await collect(ws, KEEP_NOTHING, DAY);
    expect(run.freed.packsRewritten).toBeGreaterThan(0);
    const after = await usage(ws);
    expect(after.liveBytes).toBe(kept.length * 8192);
    expect(after.storedBytes).toBeLessThanOrEqual(after.liveBytes / COMPACT_BELOW);
    expect(after.storedBytes).toBeLessThan(after.liveBytes * 1.2);
    expect(await danglingChunks(ws)).toEqual([]);
    await readBack(ws, kept);
    // A second collection finds nothing more to do.
    const again = await collect(ws, KEEP_NOTHING, DAY);
    expect(again.freed).toMatchObject({ objects: 0, packsDeleted: 0, packsRewritten: 0 });
  });

  it("deletes packs with nothing live without rewriting anything", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const first = await files("a", 200, 8192);
    const second = await files("b", 200, 8192);
    await host.push(first.entries, first.objects);
    await host.push(second.entries, second.objects);
    await host.push(first.entries.map((e) => gone(e.path)));
    const run = await collect(ws, KEEP_NOTHING, DAY);
    expect(run.freed).toMatchObject({ objects: 200, packsRewritten: 0 });
    expect(run.freed.packsDeleted).toBeGreaterThan(0);
    const after = await usage(ws);
    expect(after.storedBytes).toBe(after.liveBytes);
    await readBack(ws, second.objects);
  });
});

describe("collection on the alarm", { timeout: 60_000 }, () => {
  it("sets the alarm after a write and collects when the alarm finds a collection due", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const tree = await files("x", 3, 100);
    const before = Date.now();
    await host.push(tree.entries, tree.objects);
    const alarm = await runInDurableObject(ws, (_: WorkspaceObject, state: DurableObjectState) =>
      state.storage.getAlarm(),
    );
    expect(alarm).toBeGreaterThanOrEqual(before + COLLECT_AFTER_WRITE_MS);
    expect(alarm).toBeLessThanOrEqual(Date.now() + COLLECT_AFTER_WRITE_MS);
    // Not due yet: the alarm runs nothing and is set again.
    await runInDurableObject(ws, (_: WorkspaceObject, state: DurableObjectState) => state.storage.setAlarm(Date.now()));
    await runDurableObjectAlarm(ws);
    expect((await usage(ws)).lastCollection).toBeNull();
    // Due (a collection's record says so): the alarm collects.
    await runInDurableObject(ws, (instance: WorkspaceObject, state: DurableObjectState) => {
      const last = { startedAt: 0, endedAt: 0, rev: 0, lastPack: 0, nextDueAt: 1, freed: {} };
      instance.db.exec(
        `INSERT OR REPLACE INTO meta (key, value) VALUES ('gc', ?)`,
        JSON.stringify({ last, running: null }),
      );
      return state.storage.setAlarm(Date.now());
    });
    // The runtime may fire an alarm that is due before the test asks it to.
    await runDurableObjectAlarm(ws);
    let collected = (await usage(ws)).lastCollection;
    for (let i = 0; i < 50 && collected?.rev !== 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      collected = (await usage(ws)).lastCollection;
    }
    expect(collected?.rev).toBe(1);
    expect(collected?.startedAt).toBeGreaterThanOrEqual(before);
  });
});

const BASE = "http://ferry.test/v1/workspaces";
const token = (ws: string, rights: "r" | "rw") =>
  signToken({ ws, rights, exp: Math.floor(Date.now() / 1000) + 600 }, env.FERRY_SECRET as string);

describe("admin routes", () => {
  it("runs a collection on POST /gc with a read-write token, and refuses a read-only one", async () => {
    const name = `gc-${crypto.randomUUID()}`;
    const readOnly = await SELF.fetch(`${BASE}/${name}/gc`, {
      method: "POST",
      headers: { authorization: `Bearer ${token(name, "r")}` },
    });
    expect(readOnly.status).toBe(403);
    // An admin route answers its errors in JSON too, like its results.
    expect(((await readOnly.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    const res = await SELF.fetch(`${BASE}/${name}/gc`, {
      method: "POST",
      headers: { authorization: `Bearer ${token(name, "rw")}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ workspace: name, rev: 0, freed: { objects: 0 } });
  });

  it("deletes a workspace only when confirmed: every entry and object, and a new epoch", async () => {
    const name = `del-${crypto.randomUUID()}`;
    const ws = env.WORKSPACE.get(env.WORKSPACE.idFromName(name));
    const host = new TestHost(ws);
    const tree = await files("d", 5, 100);
    await host.push(tree.entries, tree.objects);
    const hello = (hostId = host.id) =>
      ok(ws, "hello", { version: PROTOCOL_VERSION, hostId, hostRev: 1, capabilities: [] });
    const { epoch } = await hello();
    const auth = { authorization: `Bearer ${token(name, "rw")}` };
    const unconfirmed = await SELF.fetch(`${BASE}/${name}`, { method: "DELETE", headers: auth });
    expect(unconfirmed.status).toBe(400);
    expect((await usage(ws)).objects).toBe(5);
    const res = await SELF.fetch(`${BASE}/${name}?confirm=${name}`, { method: "DELETE", headers: auth });
    expect(res.status).toBe(200);
    const after = await usage(ws);
    expect(after).toMatchObject({ objects: 0, packs: 0, liveBytes: 0, storedBytes: 0 });
    // A host that never synced it (the host that pushed is refused: test/worker/deleted-workspace.test.ts).
    const again = await hello(new TestHost(ws).id);
    expect(again.rev).toBe(0);
    expect(toHex(again.epoch)).not.toBe(toHex(epoch));
    expect(again.acked).toEqual({ rev: 0, path: null });
    // Still a working workspace.
    const more = await files("e", 2, 100);
    await new TestHost(ws).push(more.entries, more.objects);
    expect((await usage(ws)).objects).toBe(2);
  });
});
