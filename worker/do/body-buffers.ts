/**
 * Request-body buffers the workspace object reuses for large uploads
 * (objects, push with inline objects). Reading a 12 MiB body into a fresh
 * ArrayBuffer cost the object a third of its ingest CPU: V8 zero-fills the
 * new buffer, then faults its pages in, before a byte of the body lands
 * (BENCHMARKS.md §12 and §14). A buffer taken here was written before, so
 * neither happens again.
 *
 * A buffer is given back only after the call that read into it has
 * answered: the decoded request's byte strings (hashes, chunk bytes) are
 * views into it, and nothing the object keeps past a call holds such a
 * view (the collector's marks copy the hash bits, SQLite copies what it
 * binds). At most KEPT_BUFFERS stay when idle: the in-flight budget
 * (inflight.ts) already counts a buffer in use as its request's bytes.
 */
import { LIMITS } from "../../protocol/limits.ts";

/** Idle buffers kept: the host keeps two request bodies' worth in flight (client/engine/uploads.ts). */
export const KEPT_BUFFERS = 2;
/** A declared body this large is read into a reused buffer; a smaller one is not worth holding one. */
export const POOLED_FROM_BYTES = 1024 * 1024;

export class BodyBuffers {
  private readonly idle: ArrayBuffer[] = [];

  constructor(
    readonly size: number = LIMITS.maxBodyBytes,
    private readonly kept: number = KEPT_BUFFERS,
  ) {}

  /** A buffer of `size` bytes, reused when one is idle. */
  take(): ArrayBuffer {
    return this.idle.pop() ?? new ArrayBuffer(this.size);
  }

  /** Gives back a buffer from take (as the reader left it) once nothing reads from it any more. */
  give(buffer: ArrayBuffer): void {
    if (buffer.byteLength === this.size && this.idle.length < this.kept) this.idle.push(buffer);
  }

  /** Idle buffers now (tests). */
  get idleCount(): number {
    return this.idle.length;
  }
}
