/**
 * Request-body buffers the workspace object reuses for large uploads
 * (objects, push with inline objects). Reading a 12 MiB body into a fresh
 * ArrayBuffer costs the object a zero-fill and the page faults of a new
 * allocation before a byte of the body lands (BENCHMARKS.md §12 and §14). A
 * buffer taken here was written before, so neither happens again.
 *
 * A buffer is given back only after the call that read into it has
 * answered: the decoded request's byte strings (hashes, chunk bytes) are
 * views into it, and nothing the object keeps past a call holds such a
 * view (the collector's marks copy the hash bits, SQLite copies what it
 * binds).
 *
 * Memory: at most MAX_BUFFERS exist at once in the process (BODY_BUFFERS is
 * module state, shared by every object of the isolate: a pool per object
 * kept two idle 16 MiB buffers per workspace ever uploaded to, 256 MiB for
 * eight), in use or idle; a request that
 * finds none free reads its body as before. The in-flight budget
 * (inflight.ts) counts a body's bytes as before, so what the buffers add past
 * it is their unused tails (under half a buffer each, as only bodies of at
 * least POOLED_FROM_BYTES are read into one) and, while idle, the buffers.
 */
import { LIMITS } from "../../protocol/limits.ts";

/** Buffers at most: a host keeps two request bodies' worth in flight (client/engine/uploads.ts). */
export const MAX_BUFFERS = 2;
/** A declared body this large is read into a reused buffer: a smaller one would leave more than half of it unused. */
export const POOLED_FROM_BYTES = LIMITS.maxBodyBytes / 2;

export class BodyBuffers {
  private readonly idle: ArrayBuffer[] = [];
  private out = 0;

  constructor(readonly size: number = LIMITS.maxBodyBytes) {}

  /**
   * A buffer for a body that declared `declared` bytes (reused when one is
   * idle), or null when the body is too small for one, or MAX_BUFFERS are in use.
   */
  take(declared: number | undefined): ArrayBuffer | null {
    if (declared === undefined || declared < POOLED_FROM_BYTES || declared > this.size) return null;
    if (this.idle.length === 0 && this.out >= MAX_BUFFERS) return null;
    this.out++;
    return this.idle.pop() ?? new ArrayBuffer(this.size);
  }

  /**
   * Ends a take: `buffer` is the taken one as the body reader left it (BYOB
   * reads transfer it), or null when it was lost to a failed read.
   */
  give(buffer: ArrayBuffer | null): void {
    this.out--;
    if (buffer !== null && buffer.byteLength === this.size) this.idle.push(buffer);
  }

  /** Idle buffers now (tests). */
  get idleCount(): number {
    return this.idle.length;
  }
}

/** The process's buffers: every object of this isolate takes from them. */
export const BODY_BUFFERS = new BodyBuffers();
