/**
 * The collector's mark set: every object hash something retained names,
 * held in memory while one collection runs (collect.ts). A hash is kept as
 * its first 8 bytes in an open-addressed table of two Uint32Arrays, ~16
 * bytes a hash at worst, so a million objects take 16 MiB of the object's
 * 128 MB, where a Set of hex strings would take ~100 MiB.
 *
 * Two hashes sharing 8 bytes are one mark: an unreferenced object could then
 * be kept (a chance of about n/2^64 per object), never a referenced one
 * dropped. The all-zero prefix marks an empty slot, so it has its own flag.
 */
import { wordAt } from "../../../protocol/hash.ts";

const MIN_SLOTS = 1024;

export class HashMarks {
  private hi = new Uint32Array(MIN_SLOTS);
  private lo = new Uint32Array(MIN_SLOTS);
  private used = 0;
  private zero = false;

  get size(): number {
    return this.used + (this.zero ? 1 : 0);
  }

  add(hash: Uint8Array, offset = 0): void {
    const hi = wordAt(hash, offset);
    const lo = wordAt(hash, offset + 4);
    if (hi === 0 && lo === 0) {
      this.zero = true;
      return;
    }
    if ((this.used + 1) * 2 > this.hi.length) this.grow();
    this.insert(hi, lo);
  }

  /** Marks every 32-byte hash of a stored chunk list (entries.chunks, versions.chunks). */
  addChunkList(chunks: Uint8Array | null): void {
    if (chunks === null) return;
    for (let at = 0; at + 32 <= chunks.byteLength; at += 32) this.add(chunks, at);
  }

  has(hash: Uint8Array): boolean {
    const hi = wordAt(hash, 0);
    const lo = wordAt(hash, 4);
    if (hi === 0 && lo === 0) return this.zero;
    const mask = this.hi.length - 1;
    for (let i = (lo ^ Math.imul(hi, 0x9e3779b1)) & mask; ; i = (i + 1) & mask) {
      if (this.hi[i] === 0 && this.lo[i] === 0) return false;
      if (this.hi[i] === hi && this.lo[i] === lo) return true;
    }
  }

  private insert(hi: number, lo: number): void {
    const mask = this.hi.length - 1;
    for (let i = (lo ^ Math.imul(hi, 0x9e3779b1)) & mask; ; i = (i + 1) & mask) {
      if (this.hi[i] === 0 && this.lo[i] === 0) {
        this.hi[i] = hi;
        this.lo[i] = lo;
        this.used++;
        return;
      }
      if (this.hi[i] === hi && this.lo[i] === lo) return;
    }
  }

  private grow(): void {
    const { hi, lo } = this;
    this.hi = new Uint32Array(hi.length * 2);
    this.lo = new Uint32Array(lo.length * 2);
    this.used = 0;
    for (let i = 0; i < hi.length; i++) {
      if (hi[i] !== 0 || lo[i] !== 0) this.insert(hi[i] as number, lo[i] as number);
    }
  }
}
