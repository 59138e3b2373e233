/** Objects stored in packs (worker/sync/packs.ts), seen through the operations and the tables. */

import { describe, expect, it } from "vitest";
import { sha256, toHex } from "../../../protocol/hash.ts";
import { MiB } from "../../../protocol/limits.ts";
import type { GetObjectsResponse, ObjectBlob } from "../../../protocol/objects.ts";
import { migrate } from "../../../worker/do/schema.ts";
import { getObjects, MAX_PACKS_PER_GET } from "../../../worker/sync/objects.ts";
import { INLINE_BYTES, PACK_BYTES, SOLO_BYTES } from "../../../worker/sync/packs.ts";
import type { CoreWorkspace } from "../harness.ts";
import { freshWorkspace, ok, refused, stats, TestHost } from "../helpers.ts";

/** An object of `size` bytes, different for every `seed`. */
async function sized(size: number, seed: number): Promise<ObjectBlob> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (seed * 31 + i * 7 + (i >> 8)) & 0xff;
  new DataView(bytes.buffer).setUint32(0, seed);
  return { hash: await sha256(bytes), bytes };
}

type Layout = { packs: { id: number; size: number }[]; index: Map<string, { pack: number | null; offset: number }> };

function layout(ws: CoreWorkspace): Promise<Layout> {
  return ws.withDb((ctx) => {
    const packs = ctx.db.exec<{ id: number; size: number }>(
      `SELECT id, length(bytes) AS size FROM packs ORDER BY id`,
    ).rows;
    const rows = ctx.db.exec<{ hash: Uint8Array; pack: number | null; offset: number }>(
      `SELECT hash, pack, offset FROM objects`,
    ).rows;
    return { packs, index: new Map(rows.map((r) => [toHex(r.hash), { pack: r.pack, offset: r.offset }])) };
  });
}

/** objects/get as the object runs it, past the wire's hash-list encoding. */
function get(ws: CoreWorkspace, hashes: readonly Uint8Array[], maxBytes?: number): Promise<GetObjectsResponse> {
  return ws.withDb((ctx) => getObjects(ctx, maxBytes === undefined ? { hashes } : { hashes, maxBytes }));
}

async function expectReadBack(ws: CoreWorkspace, objects: readonly ObjectBlob[]): Promise<void> {
  const got = await get(
    ws,
    objects.map((o) => o.hash),
  );
  expect(got.missing).toEqual([]);
  expect(got.objects.map((o) => toHex(o.hash))).toEqual(objects.map((o) => toHex(o.hash)));
  // Each answer's bytes hash to its own hash (comparing megabytes element by element is slow).
  const digests = await Promise.all(got.objects.map(async (o) => toHex(await sha256(o.bytes))));
  expect(digests).toEqual(objects.map((o) => toHex(o.hash)));
}

export function packsSuite(): void {
  describe("packs", () => {
    it("closes a pack before it passes PACK_BYTES and never splits an object", async () => {
      const ws = freshWorkspace();
      const size = SOLO_BYTES - 1;
      const objects = await Promise.all(Array.from({ length: 9 }, (_, i) => sized(size, i)));
      await ok(ws, "putObjects", { objects });
      const { packs, index } = await layout(ws);
      const perPack = Math.floor(PACK_BYTES / size);
      expect(packs.map((p) => p.size)).toEqual([perPack * size, perPack * size, (9 - 2 * perPack) * size]);
      objects.forEach((o, i) => {
        expect(index.get(toHex(o.hash))).toEqual({
          pack: packs[Math.floor(i / perPack)]?.id,
          offset: (i % perPack) * size,
        });
      });
      await expectReadBack(ws, objects);
    });

    it("gives an object of SOLO_BYTES or more a pack of its own and keeps packing around it", async () => {
      const ws = freshWorkspace();
      const small = [await sized(1000, 1), await sized(1000, 2)];
      const large = await sized(MiB, 3);
      await ok(ws, "putObjects", { objects: [small[0], large, small[1]] });
      const { packs, index } = await layout(ws);
      expect(packs.map((p) => p.size)).toEqual([2000, MiB]);
      expect(index.get(toHex(large.hash))).toEqual({ pack: packs[1]?.id, offset: 0 });
      expect(index.get(toHex(small[1]?.hash as Uint8Array))).toEqual({ pack: packs[0]?.id, offset: 1000 });
      await expectReadBack(ws, [large, ...small]);
    });

    it("keeps an object of INLINE_BYTES or fewer in its index row, and no pack", async () => {
      const ws = freshWorkspace();
      const tiny = [await sized(INLINE_BYTES, 1), await sized(4, 2)];
      await ok(ws, "putObjects", { objects: tiny });
      const { packs, index } = await layout(ws);
      expect(packs).toEqual([]);
      expect(index.get(toHex(tiny[0]?.hash as Uint8Array))?.pack).toBeNull();
      await expectReadBack(ws, tiny);
    });

    it("packs a hash repeated within one request once", async () => {
      const ws = freshWorkspace();
      const a = await sized(1000, 1);
      expect(await ok(ws, "putObjects", { objects: [a, a, a] })).toEqual({ stored: 1, present: 2 });
      expect((await layout(ws)).packs.map((p) => p.size)).toEqual([1000]);
    });

    it("packs only the objects a later request adds, and writes nothing for a re-sent one", async () => {
      const ws = freshWorkspace();
      const first = [await sized(1000, 1), await sized(1000, 2)];
      const second = [first[1] as ObjectBlob, await sized(500, 3)];
      await ok(ws, "putObjects", { objects: first });
      expect(await ok(ws, "putObjects", { objects: second })).toEqual({ stored: 1, present: 1 });
      expect((await layout(ws)).packs.map((p) => p.size)).toEqual([2000, 500]);
      const host = new TestHost(ws);
      const before = await layout(ws);
      await host.push([], [...first, ...second]);
      expect((await layout(ws)).packs).toEqual(before.packs);
      await expectReadBack(ws, [...second, ...first]);
    });

    it("reads objects spanning many packs, in request order", async () => {
      const ws = freshWorkspace();
      const objects: ObjectBlob[] = [];
      for (let r = 0; r < 6; r++) {
        const batch = await Promise.all(Array.from({ length: 3 }, (_, i) => sized(200_000, r * 10 + i)));
        await ok(ws, "putObjects", { objects: batch });
        objects.push(...batch);
      }
      expect((await layout(ws)).packs.length).toBe(6);
      await expectReadBack(ws, [...objects].reverse());
    });

    it("stops an answer before it reads more than MAX_PACKS_PER_GET packs, and answers the rest when asked", async () => {
      const ws = freshWorkspace();
      const objects: ObjectBlob[] = [];
      for (let i = 0; i < MAX_PACKS_PER_GET + 3; i++) objects.push(await sized(100, i));
      for (const o of objects) await ok(ws, "putObjects", { objects: [o] });
      const got = await get(
        ws,
        objects.map((o) => o.hash),
      );
      expect(got.objects).toHaveLength(MAX_PACKS_PER_GET);
      const rest = await get(
        ws,
        objects.slice(MAX_PACKS_PER_GET).map((o) => o.hash),
      );
      expect(rest.objects.map((o) => o.bytes)).toEqual(objects.slice(MAX_PACKS_PER_GET).map((o) => o.bytes));
    });

    it("keeps the byte bound of an answer whose objects share a pack", async () => {
      const ws = freshWorkspace();
      const objects = await Promise.all(Array.from({ length: 5 }, (_, i) => sized(1000, i)));
      await ok(ws, "putObjects", { objects });
      const got = await get(
        ws,
        objects.map((o) => o.hash),
        2999,
      );
      expect(got.objects.map((o) => o.bytes)).toEqual(objects.slice(0, 2).map((o) => o.bytes));
    });

    it("stores nothing, no pack either, when one object of a request is corrupt", async () => {
      const ws = freshWorkspace();
      const good = await sized(1000, 1);
      const forged = { hash: (await sized(1000, 2)).hash, bytes: (await sized(1000, 3)).bytes };
      const { error } = await refused(ws, "putObjects", { objects: [good, forged] });
      expect(error.code).toBe("hash_mismatch");
      expect(await layout(ws)).toEqual({ packs: [], index: new Map() });
      const pushed = await refused(ws, "push", new TestHost(ws).packRequest([], [good, forged]));
      expect(pushed.error.code).toBe("hash_mismatch");
      expect(await layout(ws)).toEqual({ packs: [], index: new Map() });
    });

    it("moves objects stored before packs into packs of their own, readable as before", async () => {
      const ws = freshWorkspace();
      const objects = [await sized(10, 1), await sized(1000, 2), await sized(MiB, 3)];
      await ws.withDb((ctx) => {
        const db = ctx.db;
        // Storage as schema version 1 left it: bytes in the objects row.
        db.exec(`DROP TABLE objects`);
        db.exec(`DROP TABLE packs`);
        db.exec(`CREATE TABLE objects (hash BLOB PRIMARY KEY, bytes BLOB NOT NULL) WITHOUT ROWID`);
        db.exec(`ALTER TABLE hosts DROP COLUMN pulled_rev`);
        db.exec(`ALTER TABLE revs DROP COLUMN bytes`);
        for (const o of objects) db.exec(`INSERT INTO objects (hash, bytes) VALUES (?, ?)`, o.hash, o.bytes);
        db.exec(`UPDATE meta SET value = 1 WHERE key = 'schema_version'`);
        migrate(db, new Uint8Array(16));
      });
      const { packs, index } = await layout(ws);
      expect(packs.map((p) => p.size).sort((a, b) => a - b)).toEqual([1000, MiB]);
      expect(index.get(toHex(objects[0]?.hash as Uint8Array))?.pack).toBeNull();
      expect((await stats(ws)).objectBytes).toBe(10 + 1000 + MiB);
      await expectReadBack(ws, objects);
      const more = await sized(2000, 4);
      expect(await ok(ws, "putObjects", { objects: [...objects, more] })).toEqual({ stored: 1, present: 3 });
      await expectReadBack(ws, [more, ...objects]);
    });

    it("keeps packs stored before R2 in their rows, live and sized, readable as before", async () => {
      const ws = freshWorkspace();
      const objects = [await sized(10, 1), await sized(1000, 2), await sized(MiB, 3)];
      await ok(ws, "putObjects", { objects });
      const before = await layout(ws);
      await ws.withDb((ctx) => {
        const db = ctx.db;
        // Storage as schema version 10 left it: packs with bytes only.
        db.exec(`CREATE TABLE packs_v10 (id INTEGER PRIMARY KEY, bytes BLOB NOT NULL)`);
        db.exec(`INSERT INTO packs_v10 (id, bytes) SELECT id, bytes FROM packs`);
        db.exec(`DROP TABLE packs`);
        db.exec(`ALTER TABLE packs_v10 RENAME TO packs`);
        db.exec(`UPDATE meta SET value = 10 WHERE key = 'schema_version'`);
        migrate(db, new Uint8Array(16));
      });
      expect(await layout(ws)).toEqual(before);
      const rows = await ws.withDb(
        (ctx) =>
          ctx.db.exec<{ size: number; length: number; r2_key: string | null; state: string }>(
            `SELECT size, length(bytes) AS length, r2_key, state FROM packs ORDER BY id`,
          ).rows,
      );
      expect(rows.map((r) => [r.size, r.r2_key, r.state])).toEqual(rows.map((r) => [r.length, null, "live"]));
      await expectReadBack(ws, objects);
    });
  });
}
