import { describe, expect, it } from "vitest";
import { encodeCbor } from "../../../protocol/cbor.ts";
import { hashAt, joinHashes } from "../../../protocol/hash.ts";
import { seekOrder } from "../../../worker/sync/seek-order.ts";
import { callRaw, freshWorkspace, metered, ok } from "../helpers.ts";

function randomHashes(count: number): Uint8Array[] {
  const all = new Uint8Array(count * 32);
  for (let i = 0; i < all.length; i += 65536) crypto.getRandomValues(all.subarray(i, i + 65536));
  return Array.from({ length: count }, (_, i) => all.subarray(i * 32, i * 32 + 32));
}

export function hasSuite(): void {
  describe("has", () => {
    it("answers in input order, one byte per hash", async () => {
      const ws = freshWorkspace();
      const bytes = new TextEncoder().encode("x");
      const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      await ok(ws, "putObjects", { objects: [{ hash, bytes }] });
      const [other] = randomHashes(1);
      const { have } = await ok(ws, "has", {
        hashes: joinHashes([other as Uint8Array, hash, other as Uint8Array, hash]),
      });
      expect(have).toEqual(new Uint8Array([0, 1, 0, 1]));
    });

    it("answers duplicates and hashes that share their first bytes, each in its place", async () => {
      const ws = freshWorkspace();
      const stored = await Promise.all(
        ["p", "q"].map(async (text) => {
          const bytes = new TextEncoder().encode(text);
          return { hash: new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), bytes };
        }),
      );
      await ok(ws, "putObjects", { objects: stored });
      const [p, q] = stored.map((o) => o.hash) as [Uint8Array, Uint8Array];
      // Same first 4 bytes as p (the seek order's key), different after: ties in the order.
      const twin = new Uint8Array(p);
      twin[31] = (twin[31] as number) ^ 1;
      const zero = new Uint8Array(32);
      const { have } = await ok(ws, "has", { hashes: joinHashes([twin, p, q, zero, p, twin, q, zero]) });
      expect(have).toEqual(new Uint8Array([0, 1, 1, 0, 1, 0, 1, 0]));
    });

    it("answers an empty probe", async () => {
      expect((await ok(freshWorkspace(), "has", { hashes: new Uint8Array(0) })).have).toEqual(new Uint8Array(0));
    });

    it("reads the list where it lies in the body, whatever its offset", async () => {
      const ws = freshWorkspace();
      const bytes = new TextEncoder().encode("offset");
      const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      await ok(ws, "putObjects", { objects: [{ hash, bytes }] });
      // Keys before `hashes` put its byte string well inside the body, which the server binds windows of as they lie.
      const body = encodeCbor({
        a: "x",
        hashes: joinHashes([hash, ...randomHashes(2)]),
        z: "unknown keys are ignored",
      });
      const answer = await callRaw(ws, "has", body);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ have: new Uint8Array([1, 0, 0]) });
    });

    it("probes 100,000 hashes correctly in a handful of statements", async () => {
      const ws = freshWorkspace();
      const hashes = joinHashes(randomHashes(100_000));
      // Every 50th hash is one of 2,000 stored objects; the rest are random.
      const stored: { hash: Uint8Array; bytes: Uint8Array }[] = [];
      for (let i = 0; i < 2000; i++) {
        const bytes = new TextEncoder().encode(`object ${i}`);
        stored.push({ hash: new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), bytes });
      }
      for (let i = 0; i < stored.length; i += 1000) await ok(ws, "putObjects", { objects: stored.slice(i, i + 1000) });
      const expected = new Uint8Array(100_000);
      stored.forEach((o, i) => {
        hashAt(hashes, i * 50).set(o.hash);
        expected[i * 50] = 1;
      });

      let have: Uint8Array = new Uint8Array();
      const meter = await metered(ws, async () => {
        have = (await ok(ws, "has", { hashes })).have;
      });
      expect(have).toEqual(expected);
      expect(meter.statements).toBeLessThanOrEqual(2);
    });
  });

  describe("seekOrder", () => {
    it("is a permutation of the window in ascending order of the first two bytes, ties by position", () => {
      const hashes = randomHashes(5000);
      hashes[10]?.set([0xff, 0xff]);
      hashes[20]?.set([0xff, 0xff]);
      const list = joinHashes(hashes);
      const { order, sorted } = seekOrder(list, 5000);
      expect([...order].sort((a, b) => a - b)).toEqual(Array.from({ length: 5000 }, (_, i) => i));
      order.forEach((i, j) => {
        expect(hashAt(sorted, j)).toEqual(hashes[i]);
      });
      const firstTwo = (j: number) => ((sorted[j * 32] as number) << 8) | (sorted[j * 32 + 1] as number);
      for (let j = 1; j < 5000; j++) expect(firstTwo(j)).toBeGreaterThanOrEqual(firstTwo(j - 1));
      expect(order.indexOf(10)).toBeLessThan(order.indexOf(20));
    });
  });
}
