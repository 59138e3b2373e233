import { describe, expect, it } from "vitest";
import { freshWorkspace, metered, ok } from "./helpers.ts";

function randomHashes(count: number): Uint8Array[] {
  const all = new Uint8Array(count * 32);
  for (let i = 0; i < all.length; i += 65536) crypto.getRandomValues(all.subarray(i, i + 65536));
  return Array.from({ length: count }, (_, i) => all.subarray(i * 32, i * 32 + 32));
}

describe("has", () => {
  it("answers in input order", async () => {
    const ws = freshWorkspace();
    const bytes = new TextEncoder().encode("x");
    const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    await ok(ws, "putObjects", { objects: [{ hash, bytes }] });
    const [other] = randomHashes(1);
    expect((await ok(ws, "has", { hashes: [other, hash, other, hash] })).have).toEqual([false, true, false, true]);
  });

  it("answers an empty probe", async () => {
    expect((await ok(freshWorkspace(), "has", { hashes: [] })).have).toEqual([]);
  });

  it("probes 100,000 hashes correctly in a handful of statements", async () => {
    const ws = freshWorkspace();
    const hashes = randomHashes(100_000);
    // Every 50th hash is one of 2,000 stored objects; the rest are random.
    const stored: { hash: Uint8Array; bytes: Uint8Array }[] = [];
    for (let i = 0; i < 2000; i++) {
      const bytes = new TextEncoder().encode(`object ${i}`);
      stored.push({ hash: new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), bytes });
    }
    for (let i = 0; i < stored.length; i += 1000) await ok(ws, "putObjects", { objects: stored.slice(i, i + 1000) });
    const expected = hashes.map(() => false);
    stored.forEach((o, i) => {
      hashes[i * 50] = o.hash;
      expected[i * 50] = true;
    });

    let have: boolean[] = [];
    const meter = await metered(ws, async () => {
      have = [...(await ok(ws, "has", { hashes })).have];
    });
    expect(have).toEqual(expected);
    expect(meter.statements).toBeLessThanOrEqual(2);
  });
});
