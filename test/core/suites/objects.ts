import { describe, expect, it } from "vitest";
import { joinHashes, sha256, toHex } from "../../../protocol/hash.ts";
import { LIMITS, MiB } from "../../../protocol/limits.ts";
import { blob, freshWorkspace, ok, refused, stats } from "../helpers.ts";

async function sized(bytes: number, fill: number) {
  const data = new Uint8Array(bytes).fill(fill);
  return { hash: await sha256(data), bytes: data };
}

export function objectsSuite(): void {
  describe("putObjects", () => {
    it("stores new objects and counts those already held", async () => {
      const ws = freshWorkspace();
      const a = await blob("a");
      const b = await blob("b");
      expect(await ok(ws, "putObjects", { objects: [a] })).toEqual({ stored: 1, present: 0 });
      expect(await ok(ws, "putObjects", { objects: [a, b] })).toEqual({ stored: 1, present: 1 });
    });

    it("counts a hash repeated within one request once as stored", async () => {
      const ws = freshWorkspace();
      const a = await blob("a");
      expect(await ok(ws, "putObjects", { objects: [a, a] })).toEqual({ stored: 1, present: 1 });
    });

    it("refuses a corrupt object, names its hash, and keeps the stored one intact", async () => {
      const ws = freshWorkspace();
      const good = await blob("the real bytes");
      const other = await blob("other");
      await ok(ws, "putObjects", { objects: [good] });
      const before = await stats(ws);
      const forged = { hash: good.hash, bytes: new TextEncoder().encode("forged bytes") };
      const { status, error } = await refused(ws, "putObjects", { objects: [other, forged] });
      expect(status).toBe(422);
      expect(error.code).toBe("hash_mismatch");
      expect((error.hashes as Uint8Array[]).map(toHex)).toEqual([toHex(good.hash)]);
      expect(await stats(ws)).toEqual(before);
      const got = await ok(ws, "getObjects", { hashes: joinHashes([good.hash]) });
      expect(got.objects[0]?.bytes).toEqual(good.bytes);
    });

    it("stores a 1 MiB object", async () => {
      const ws = freshWorkspace();
      const object = await sized(MiB, 7);
      expect(await ok(ws, "putObjects", { objects: [object] })).toEqual({ stored: 1, present: 0 });
      expect((await stats(ws)).objectBytes).toBe(MiB);
    });

    it("refuses an object over 1 MiB", async () => {
      const ws = freshWorkspace();
      const object = await sized(MiB + 1, 7);
      const { status, error } = await refused(ws, "putObjects", { objects: [object] });
      expect(status).toBe(413);
      expect(error.code).toBe("payload_too_large");
    });
  });

  describe("getObjects", () => {
    it("answers in request order and lists the missing hashes", async () => {
      const ws = freshWorkspace();
      const a = await blob("a");
      const b = await blob("b");
      const absent = await blob("absent");
      await ok(ws, "putObjects", { objects: [a, b] });
      const got = await ok(ws, "getObjects", { hashes: joinHashes([b.hash, absent.hash, a.hash]) });
      expect(got.objects).toEqual([b, a]);
      expect(got.missing).toEqual([absent.hash]);
    });

    it("stops before the byte bound", async () => {
      const ws = freshWorkspace();
      const objects = [await sized(1000, 1), await sized(1000, 2), await sized(1000, 3)];
      await ok(ws, "putObjects", { objects });
      const got = await ok(ws, "getObjects", { hashes: joinHashes(objects.map((o) => o.hash)), maxBytes: 2500 });
      expect(got.objects.map((o) => toHex(o.hash))).toEqual(objects.slice(0, 2).map((o) => toHex(o.hash)));
      expect(got.missing).toEqual([]);
    });

    it("always carries the first held object even when it alone passes the bound", async () => {
      const ws = freshWorkspace();
      const object = await sized(1000, 1);
      await ok(ws, "putObjects", { objects: [object] });
      const got = await ok(ws, "getObjects", { hashes: joinHashes([object.hash]), maxBytes: 0 });
      expect(got.objects).toHaveLength(1);
    });

    it("caps the answer at maxGetBytes whatever maxBytes is asked", async () => {
      const ws = freshWorkspace();
      const objects = await Promise.all(Array.from({ length: 10 }, (_, i) => sized(MiB, i)));
      for (const object of objects) await ok(ws, "putObjects", { objects: [object] });
      const got = await ok(ws, "getObjects", { hashes: joinHashes(objects.map((o) => o.hash)), maxBytes: 100 * MiB });
      // 4 MiB of 1 MiB objects (8 before 2026-12-07: the limit is protocol/limits.ts's).
      expect(got.objects).toHaveLength(LIMITS.maxGetBytes / MiB);
      expect(LIMITS.maxGetBytes).toBe(4 * MiB);
    });
  });
}
