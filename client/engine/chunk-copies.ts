/**
 * Copies of the chunks the early upload holds (early-upload.ts). The
 * scanner hands each chunk over as a view of its read buffer, reused for
 * the next read, so the uploader must copy it; a fresh buffer per chunk
 * cost page faults on new memory and garbage collection for every byte of
 * a first push (issue 13: 0.5 s of a 590 MiB push's profile, and part of its
 * 1.5 s of GC). Here copies go into slabs, and a slab is written again once
 * every chunk in it has been released, which the early upload does when the
 * server has answered the batch that carried it.
 */
import { CHUNK_MAX } from "../content/chunker.ts";

/** Bytes of a slab: four of the largest chunks (CHUNK_MAX), so a slab wastes at most a quarter of itself. */
const SLAB_BYTES = 4 * 1024 * 1024;

interface Slab {
  readonly bytes: Uint8Array;
  /** Bytes handed out from the start of the slab. */
  used: number;
  /** Copies handed out and not yet released. */
  live: number;
}

export class ChunkCopies {
  private current: Slab | null = null;
  private readonly spare: Slab[] = [];
  private readonly slabs = new Map<ArrayBufferLike, Slab>();
  private readonly maxSlabs: number;

  /**
   * `maxBytes`: the most the early upload holds. An emptied slab is kept
   * while there are no more slabs than that many bytes of copies can keep
   * live at once: a slab is closed once
   * the next chunk does not fit (more than SLAB_BYTES - CHUNK_MAX used), and
   * the copies held span a run of slabs with a partly released one at either
   * end. Kept to `maxBytes` alone, the slabs live at the run's peak (15 of
   * 4 MiB under a 48 MiB bound in the heavy tree's push) were forgotten as
   * they emptied and allocated again moments later: 41 slabs for 580 MiB,
   * each one's pages faulted in and zeroed by the kernel as it was first
   * written (BENCHMARKS.md section 17, push).
   */
  constructor(maxBytes: number) {
    this.maxSlabs = Math.ceil(maxBytes / (SLAB_BYTES - CHUNK_MAX)) + 2;
  }

  /** A copy of `bytes`, valid until it is released. */
  copy(bytes: Uint8Array): Uint8Array {
    if (bytes.byteLength > SLAB_BYTES) return new Uint8Array(bytes);
    let slab = this.current;
    if (slab === null || slab.used + bytes.byteLength > SLAB_BYTES) {
      if (slab !== null && slab.live === 0) this.keep(slab);
      slab = this.spare.pop() ?? this.allocate();
      this.current = slab;
    }
    const view = new Uint8Array(slab.bytes.buffer, slab.used, bytes.byteLength);
    view.set(bytes);
    slab.used += bytes.byteLength;
    slab.live++;
    return view;
  }

  /**
   * Gives back a copy, once: nothing may read it afterwards. Bytes this
   * ChunkCopies did not copy are ignored.
   */
  release(copy: Uint8Array): void {
    const slab = this.slabs.get(copy.buffer);
    if (slab === undefined || slab.live === 0) return;
    slab.live--;
    if (slab.live > 0) return;
    if (slab === this.current) slab.used = 0;
    else this.keep(slab);
  }

  private allocate(): Slab {
    // Never from Node's shared pool: each slab's ArrayBuffer is its own, so release finds it. Not zero-filled.
    const { buffer } = Buffer.allocUnsafeSlow(SLAB_BYTES);
    const slab: Slab = { bytes: new Uint8Array(buffer, 0, SLAB_BYTES), used: 0, live: 0 };
    this.slabs.set(slab.bytes.buffer, slab);
    return slab;
  }

  /** An emptied slab goes back to the spares, or is forgotten (and collected) while slabs are past the bound. */
  private keep(slab: Slab): void {
    slab.used = 0;
    if (this.slabs.size <= this.maxSlabs) this.spare.push(slab);
    else this.slabs.delete(slab.bytes.buffer);
  }
}
