/**
 * Uploading while scanning. The first push of a large tree used to hash the
 * whole tree, then upload it: the host's disk and CPU worked while the server
 * idled, then the other way round. Here the scanner hands over each new
 * chunk's bytes as it hashes them; batches of a few MiB are probed with `has`
 * (unless the workspace can hold none, uploads.ts) and the missing chunks
 * sent with `objects` while the scan goes on, several batches in flight
 * (uploads.ts). The push that follows knows those chunks are held
 * (ctx.heldChunks), so it neither probes for them again nor sends them:
 * entries only.
 *
 * Purely an optimisation: a small change (all of it queued when the scan
 * ended, no batch sent, at most half a request body) and the tail of a large
 * one (less than FLUSH_BYTES) are left to the push, which probes them (or
 * not, when they are few bytes, push.ts) and sends them inline with its
 * entries; and a failed batch stops early
 * uploads, leaving the chunks to the push, which reports the error if it
 * persists.
 */

import { toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { nowMs } from "../common/clock.ts";
import { STEP_CHUNK_BYTES } from "../content/file-chunks.ts";
import { ChunkCopies } from "./chunk-copies.ts";
import type { EngineContext } from "./context.ts";
import { bodyBudget, OBJECT_OVERHEAD } from "./pack-size.ts";
import { Uploads } from "./uploads.ts";

/**
 * Bytes of the first batch; each next batch doubles, up to the body budget.
 * Small first, so uploading starts early; large later, because every batch
 * is a commit on the server, and a commit's fixed cost (measured: 105
 * batches of 4 MiB for 421 MiB left the object idle half the push) is paid
 * per batch, not per byte.
 */
const FIRST_BATCH_BYTES = 2 * 1024 * 1024;
/** The scan waits while this many batches are queued behind those in flight. */
const QUEUED_BATCHES = 2;
/**
 * Bytes held (queued or in flight) at most, by default four request bodies.
 * The scan waits between the blocks of a large file (chunkFileSteps) while
 * the next block's chunks would not fit; a chunk past the bound all the same
 * (a bound smaller than a block) is not copied and is left to the push
 * (which reads it from disk again), so memory stays bounded whatever the
 * file's size.
 */
const HELD_BODIES = 4;
/** At the scan's end, after batches were sent, a queue of at least this many bytes is sent rather than left to the push. */
const FLUSH_BYTES = 1024 * 1024;
/** While a batch is in flight, the scan gives the event loop a turn at least this often. */
const YIELD_EVERY_MS = 4;

export class EarlyUpload {
  private queue: ObjectBlob[] = [];
  private queuedBytes = 0;
  private readonly seen = new Set<string>();
  private readonly uploads: Uploads;
  private yielded = nowMs();
  private readonly maxBatchBytes: number;
  private readonly maxHeldBytes: number;
  private batchBytes: number;
  private readonly copies: ChunkCopies;
  /**
   * Whether the queue no longer holds the whole change: a batch was sent,
   * or a chunk was left out past maxHeldBytes.
   */
  private partial = false;

  constructor(
    private readonly ctx: EngineContext,
    maxHeldBytes?: number,
  ) {
    this.uploads = new Uploads(ctx);
    this.maxBatchBytes = bodyBudget(ctx.server.limits);
    this.maxHeldBytes = maxHeldBytes ?? HELD_BODIES * this.maxBatchBytes;
    this.batchBytes = Math.min(FIRST_BATCH_BYTES, this.maxBatchBytes);
    this.copies = new ChunkCopies(this.maxHeldBytes);
  }

  /** A chunk the scan just hashed; `bytes` is only valid during the call (file-chunks.ts). */
  add(hash: Uint8Array, bytes: Uint8Array): void {
    if (this.halted()) return;
    if (this.queuedBytes + this.uploads.pendingBytes >= this.maxHeldBytes) {
      this.partial = true;
      return;
    }
    const hex = toHex(hash);
    if (this.seen.has(hex)) return;
    this.seen.add(hex);
    this.queue.push({ hash, bytes: this.copies.copy(bytes) });
    this.queuedBytes += bytes.byteLength + OBJECT_OVERHEAD;
    this.startBatches();
  }

  /** For Scanner.scanPausing: a promise when the scan should wait (queue full) or let I/O run. */
  pause(): Promise<void> | null {
    if (!this.uploads.busy) return null;
    if (this.full()) return this.roomy();
    if (nowMs() - this.yielded < YIELD_EVERY_MS) return null;
    this.yielded = nowMs();
    return new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * The queue is long enough, or has no room for the next step's chunks (a
   * block of a large file), which would be left to the push, read and hashed again.
   */
  private full(): boolean {
    return (
      this.queuedBytes >= QUEUED_BATCHES * this.batchBytes ||
      this.queuedBytes + this.uploads.pendingBytes + STEP_CHUNK_BYTES > this.maxHeldBytes
    );
  }

  /** Resolves once the queue is no longer full, or nothing is in flight to free it. */
  private async roomy(): Promise<void> {
    while (this.uploads.busy && this.full()) await this.uploads.settled();
  }

  /**
   * Sends what is queued unless the push is to carry it (see the top),
   * without waiting for the last batches' answers: the caller stamps the
   * scan meanwhile (scan-stamp.ts), then calls `finish`.
   */
  async flush(): Promise<void> {
    // A whole change sent here would take a probe and an upload before the
    // push; left to the push, a probe and the push (the objects inline): one
    // round trip less (a 566-file step of the replay took four).
    const flush = this.partial ? FLUSH_BYTES : this.maxBatchBytes / 2;
    while (!this.halted() && this.queuedBytes >= flush) {
      if (!this.startBatch()) await this.uploads.settled();
    }
  }

  /** Flushes, and waits for every batch in flight; what is left queued goes with the push. */
  async finish(): Promise<void> {
    await this.flush();
    await this.uploads.idle();
    this.queue = [];
    this.queuedBytes = 0;
  }

  /** Starts every batch the window has room for: full ones, or a smaller one while nothing is in flight. */
  private startBatches(): void {
    while (!this.halted() && this.queuedBytes >= this.sendFrom() && this.startBatch()) {}
  }

  /**
   * Bytes queued that make a batch. With nothing in flight the object is
   * idle, so the first batch's size is enough: waiting for a full one
   * (12 MiB) while the scan reads small files left the object idle 0.5-1 s
   * at a time, work it then did while the host waited (BENCHMARKS §15).
   */
  private sendFrom(): number {
    return this.uploads.busy ? this.batchBytes : Math.min(this.batchBytes, FIRST_BATCH_BYTES);
  }

  /** Sends the queue's next batch (up to batchBytes); false when the window has no room for it. */
  private startBatch(): boolean {
    const { maxObjects, maxHas } = this.ctx.server.limits;
    const take = Math.min(this.queue.length, maxObjects, maxHas);
    let bytes = 0;
    let end = 0;
    while (end < take && (end === 0 || bytes + (this.queue[end] as ObjectBlob).bytes.byteLength <= this.batchBytes)) {
      bytes += (this.queue[end] as ObjectBlob).bytes.byteLength + OBJECT_OVERHEAD;
      end++;
    }
    if (end === 0 || !this.uploads.hasRoom(bytes)) return false;
    const batch = this.queue.slice(0, end);
    this.queue = this.queue.slice(end);
    this.queuedBytes -= bytes;
    this.batchBytes = Math.min(2 * this.batchBytes, this.maxBatchBytes);
    this.partial = true;
    // hasRoom was checked, so send() dispatches at once; a failed batch shows in halted().
    // Answered, the batch's bytes are on the server: their copies are written over next.
    const answered = () => {
      for (const o of batch) this.copies.release(o.bytes);
      this.startBatches();
    };
    this.uploads.send(batch, answered).catch(() => {});
    return true;
  }

  /**
   * A batch failed: early uploads stop and what is queued is dropped; the
   * push sends those chunks and reports the error if it persists.
   */
  private halted(): boolean {
    if (this.uploads.failed && this.queue.length > 0) {
      this.queue = [];
      this.queuedBytes = 0;
    }
    return this.uploads.failed;
  }
}
