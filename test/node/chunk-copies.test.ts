import { describe, expect, it } from "vitest";
import { ChunkCopies } from "../../client/engine/chunk-copies.ts";
import { pseudoRandom } from "./support/tree.ts";

const KiB = 1024;

/** Byte-for-byte equality (toEqual walks a typed array element by element: minutes for these sizes). */
function same(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

describe("ChunkCopies", () => {
  it("copies a chunk, so the copy keeps its bytes when the source is written over", () => {
    const copies = new ChunkCopies(16 * 1024 * KiB);
    const source = pseudoRandom(300 * KiB, 1);
    const expected = source.slice();
    const copy = copies.copy(source);
    source.fill(0);
    expect(same(copy, expected)).toBe(true);
    expect(copy.buffer).not.toBe(source.buffer);
  });

  it("never hands out bytes of a copy that is not released", () => {
    const copies = new ChunkCopies(16 * 1024 * KiB);
    const held = Array.from({ length: 40 }, (_, i) => {
      const bytes = pseudoRandom(256 * KiB + i, i);
      return { bytes, copy: copies.copy(bytes) };
    });
    for (const { bytes, copy } of held) expect(same(copy, bytes)).toBe(true);
  });

  it("writes a slab again once every copy in it is released", () => {
    const copies = new ChunkCopies(16 * 1024 * KiB);
    const first = copies.copy(pseudoRandom(1024 * KiB, 2));
    const second = copies.copy(pseudoRandom(1024 * KiB, 3));
    copies.release(first);
    // One copy of the slab is still out: the next copy does not reuse its bytes.
    const third = copies.copy(pseudoRandom(1024 * KiB, 4));
    expect(third.byteOffset).toBeGreaterThanOrEqual(second.byteOffset + second.byteLength);
    copies.release(second);
    copies.release(third);
    const fourth = copies.copy(pseudoRandom(512 * KiB, 5));
    expect(fourth.buffer).toBe(first.buffer);
    expect(fourth.byteOffset).toBe(0);
  });

  it("ignores a release of bytes it did not copy", () => {
    const copies = new ChunkCopies(16 * 1024 * KiB);
    const kept = copies.copy(pseudoRandom(64 * KiB, 6));
    copies.release(pseudoRandom(64 * KiB, 8));
    copies.release(kept.subarray(0, 0).slice());
    const next = copies.copy(pseudoRandom(64 * KiB, 9));
    expect(same(kept, pseudoRandom(64 * KiB, 6))).toBe(true);
    expect(next.byteOffset).toBeGreaterThanOrEqual(kept.byteOffset + kept.byteLength);
  });

  it("reuses its slabs while the copies held stay within its bound: no slab is allocated once the flow is steady", () => {
    // The early upload's flow: copies are taken in order and released oldest first, at most the bound held
    // (plus the chunk that crossed it, early-upload.ts `add`). Slabs straddle the flow, so more slabs than
    // bound / slab size are live at times; one forgotten then was allocated again (and faulted in) moments later.
    const bound = 16 * 1024 * KiB;
    const copies = new ChunkCopies(bound);
    const held: Uint8Array[] = [];
    let heldBytes = 0;
    const buffers = new Set<ArrayBufferLike>();
    let buffersAfterWarmup = 0;
    let copied = 0;
    for (let i = 0; copied < 256 * 1024 * KiB; i++) {
      while (heldBytes >= bound) {
        const oldest = held.shift() as Uint8Array;
        heldBytes -= oldest.byteLength;
        copies.release(oldest);
      }
      const size = 64 * KiB + ((i * 7919) % 15) * 64 * KiB;
      const copy = copies.copy(new Uint8Array(size));
      held.push(copy);
      heldBytes += size;
      copied += size;
      buffers.add(copy.buffer);
      if (copied <= 4 * bound) buffersAfterWarmup = buffers.size;
    }
    expect(buffers.size).toBe(buffersAfterWarmup);
  });
});
