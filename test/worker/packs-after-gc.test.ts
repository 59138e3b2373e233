/**
 * Packs named by the uploader (worker/sync/packs.ts: the index rows written
 * first, under ids read once per request, the packs appended after) across
 * the collector: once it deleted the newest packs, whose ids the next upload
 * takes again, and once it rewrote packs; with a failed upload of several
 * packs between. Each upload must store exactly its own bytes, a failed one
 * nothing, and every live object must read back.
 */
import { describe, expect, it } from "vitest";
import type { FileEntry } from "../../protocol/entry.ts";
import { joinHashes, sha256, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { collect, count, DAY, danglingChunks, KEEP_NOTHING, storedHashes, usage } from "./gc-support.ts";
import { freshWorkspace, gone, ok, refused, TestHost, type Workspace } from "./helpers.ts";

/** `n` objects of `size` bytes, distinct for each `tag` and index, with a file entry each under `tag/`. */
async function batch(tag: string, n: number, size: number): Promise<{ entries: FileEntry[]; objects: ObjectBlob[] }> {
  const objects = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const bytes = new Uint8Array(size);
      for (let j = 0; j < size; j += 97) bytes[j] = (i * 13 + j) & 0xff;
      new DataView(bytes.buffer).setUint32(0, i);
      new TextEncoder().encodeInto(tag, bytes.subarray(4));
      return { hash: await sha256(bytes), bytes };
    }),
  );
  const entries = objects.map(
    (o, i): FileEntry => ({ kind: "file", path: `${tag}/${i}`, mode: 0o644, mtime: 1, size, chunks: [o.hash] }),
  );
  return { entries, objects };
}

/** Every object reads back byte for byte (objects/get answers in parts: asked again for the rest). */
async function readBack(ws: Workspace, objects: readonly ObjectBlob[]): Promise<void> {
  let left = [...objects];
  while (left.length > 0) {
    const got = await ok(ws, "getObjects", { hashes: joinHashes(left.map((o) => o.hash)) });
    expect(got.missing).toEqual([]);
    expect(got.objects.length).toBeGreaterThan(0);
    for (const [i, o] of got.objects.entries()) {
      expect(toHex(o.hash)).toBe(toHex((left[i] as ObjectBlob).hash));
      expect(toHex(await sha256(o.bytes))).toBe(toHex(o.hash));
    }
    left = left.slice(got.objects.length);
  }
}

describe("packs across the collector", { timeout: 60_000 }, () => {
  it("stores each upload's own bytes after the newest packs were collected or rewritten, and nothing of a failed one", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    // Several packs each (objects of 100 KiB: ten to a 1 MiB pack), so each request assembles more than one.
    const a = await batch("a", 25, 100 * 1024);
    const b = await batch("b", 25, 100 * 1024);
    await host.push(a.entries, a.objects);
    await host.push(b.entries, b.objects);
    const newest = await count(ws, "SELECT max(id) AS n FROM packs");
    // b's packs, the newest, are collected: the next upload takes their ids again.
    await host.push(b.entries.map((e) => gone(e.path)));
    expect((await collect(ws, KEEP_NOTHING, DAY)).freed.packsDeleted).toBeGreaterThan(0);
    expect(await count(ws, "SELECT max(id) AS n FROM packs")).toBeLessThan(newest);

    // A failed upload of several packs, its forged object last: nothing stored.
    const c = await batch("c", 25, 100 * 1024);
    const forged = [
      ...c.objects.slice(0, 24),
      { hash: (c.objects[24] as ObjectBlob).hash, bytes: new Uint8Array(5000) },
    ];
    const before = await storedHashes(ws);
    const packsBefore = await count(ws, "SELECT count(*) AS n FROM packs");
    expect((await refused(ws, "putObjects", { objects: forged })).error.code).toBe("hash_mismatch");
    expect(await storedHashes(ws)).toEqual(before);
    expect(await count(ws, "SELECT count(*) AS n FROM packs")).toBe(packsBefore);

    // The next upload stores exactly its own bytes, under ids b's packs had.
    await host.push(c.entries, c.objects);
    expect(await count(ws, "SELECT max(id) AS n FROM packs")).toBeGreaterThanOrEqual(newest);
    expect(await danglingChunks(ws)).toEqual([]);
    await readBack(ws, [...a.objects, ...c.objects]);

    // All of a deleted, the oldest packs: the newest stay, above as many ids as are left.
    await host.push(a.entries.map((e) => gone(e.path)));
    expect((await collect(ws, KEEP_NOTHING, DAY)).freed.packsDeleted).toBeGreaterThan(0);
    const d = await batch("d", 25, 100 * 1024);
    await host.push(d.entries, d.objects);
    await readBack(ws, [...c.objects, ...d.objects]);

    // Most of c and d deleted: the collector rewrites their packs; then another upload.
    await host.push([...c.entries, ...d.entries].filter((_, i) => i % 4 !== 0).map((e) => gone(e.path)));
    expect((await collect(ws, KEEP_NOTHING, DAY)).freed.packsRewritten).toBeGreaterThan(0);
    const e = await batch("e", 25, 100 * 1024);
    await host.push(e.entries, e.objects);
    const live = [...c.objects, ...d.objects].filter((_, i) => i % 4 === 0);
    await readBack(ws, [...live, ...e.objects]);
    expect(await danglingChunks(ws)).toEqual([]);
    expect((await usage(ws)).liveBytes).toBe((live.length + e.objects.length) * 100 * 1024);
  });
});
