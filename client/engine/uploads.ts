/**
 * Upload batches in flight, for the early upload (early-upload.ts) and the
 * push (push.ts). One batch at a time left the object idle while the host
 * read, hashed and encoded the next one, and the host idle while the object
 * verified and stored (issue 13: the object idled 6.7-9.6 s of a 30-38 s
 * push). Here up to MAX_BATCHES go at once, within two request bodies'
 * worth of bytes: under the object's bound on request bytes in flight
 * (three bodies over every host, PROTOCOL.md §2.1), leaving room for
 * another host's request, and the same window a socket keeps (§8.2).
 *
 * Each batch asks `has` first, unless the answer is known: a workspace at
 * rev 0 has never taken a push, so it holds no object a probe would find,
 * unless hello says it does (an interrupted first push left uploads
 * behind). A batch the server answers with `present > 0` proves it holds
 * some all the same (another host's first push running, or a server too
 * old to say), and every later batch of this sync probes: at worst the
 * batches in flight by then (two request bodies) are resent, and the
 * server keeps its copy of each.
 */
import { joinHashes, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import type { EngineContext } from "./context.ts";

/** Batches in flight at most: the object is single-threaded, so more would only queue there. */
const MAX_BATCHES = 3;

export class Uploads {
  private readonly inflight = new Set<Promise<void>>();
  private inflightBytes = 0;
  private failure: { readonly error: unknown } | null = null;
  private readonly maxBytes: number;

  /**
   * `probed`: the caller has already asked `has` for what it sends (push.ts
   * decides inline or not from it). A caller that skipped its probe (a
   * workspace that could hold nothing) passes false, so that a `present`
   * answer still turns the probes on.
   */
  constructor(
    private readonly ctx: EngineContext,
    private readonly probed = false,
  ) {
    this.maxBytes = 2 * ctx.server.limits.maxBodyBytes;
  }

  /** Bytes of batches sent and not yet answered. */
  get pendingBytes(): number {
    return this.inflightBytes;
  }

  get busy(): boolean {
    return this.inflight.size > 0;
  }

  /** True when a batch of `bytes` would be sent at once. */
  hasRoom(bytes: number): boolean {
    return (
      this.inflight.size === 0 || (this.inflight.size < MAX_BATCHES && this.inflightBytes + bytes <= this.maxBytes)
    );
  }

  /** Resolves once a batch of `bytes` would be sent at once. */
  async whenRoom(bytes: number): Promise<void> {
    while (!this.hasRoom(bytes)) await this.settled();
  }

  /** Resolves when a batch in flight is answered (at once when none is). */
  async settled(): Promise<void> {
    if (this.inflight.size > 0) await Promise.race(this.inflight);
  }

  /**
   * Sends a batch once the window has room for it, without waiting for its
   * answer; a failed batch is rethrown by the next `send` or by `drain`.
   * `onDone` runs once the server has taken the batch, with its bytes
   * already out of the window.
   */
  async send(batch: readonly ObjectBlob[], onDone?: () => void): Promise<void> {
    const bytes = batch.reduce((n, o) => n + o.bytes.byteLength, 0);
    // Only awaited when full: with room, the batch is in flight when send returns (EarlyUpload counts on it).
    if (!this.hasRoom(bytes)) await this.whenRoom(bytes);
    this.throwFailure();
    this.inflightBytes += bytes;
    const release = () => {
      this.inflight.delete(sent);
      this.inflightBytes -= bytes;
    };
    const sent: Promise<void> = this.upload(batch).then(
      () => {
        release();
        onDone?.();
      },
      (error: unknown) => {
        release();
        this.failure ??= { error };
      },
    );
    this.inflight.add(sent);
  }

  /** True once a batch has failed. */
  get failed(): boolean {
    return this.failure !== null;
  }

  /** Waits for every batch in flight, whatever their outcome. */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await this.settled();
  }

  /** Waits for every batch in flight; throws the first failure. */
  async drain(): Promise<void> {
    await this.idle();
    this.throwFailure();
  }

  private throwFailure(): void {
    if (this.failure) throw this.failure.error;
  }

  private async upload(batch: readonly ObjectBlob[]): Promise<void> {
    const { ctx } = this;
    const wanted = batch.filter((o) => !ctx.heldChunks.has(toHex(o.hash)));
    let missing = wanted;
    if (!this.probed && mayHoldObjects(ctx) && wanted.length > 0) {
      const { have } = await ctx.call("has", { hashes: joinHashes(wanted.map((o) => o.hash)) });
      missing = wanted.filter((_, i) => have[i] !== 1);
    }
    if (missing.length > 0) {
      const { present } = await ctx.call("putObjects", { objects: missing });
      if (present > 0) ctx.objectsPresent = true;
      ctx.report.objectsSent += missing.length;
      ctx.report.objectBytesSent += missing.reduce((n, o) => n + o.bytes.byteLength, 0);
    }
    for (const o of wanted) ctx.heldChunks.add(toHex(o.hash));
    // The batch is done, sent or found held: the upload's total counts every chunk it had to see to.
    ctx.progress.advance(
      "upload",
      batch.reduce((n, o) => n + o.bytes.byteLength, 0),
    );
  }
}

/**
 * Whether a `has` probe can find anything: not in a workspace that has
 * never taken a push, unless hello said it holds objects all the same (a
 * first push was cut after some uploads) or an upload of this sync found
 * some already held (another host's first push, or a server too old to say).
 */
export function mayHoldObjects(ctx: EngineContext): boolean {
  return ctx.server.rev > 0 || ctx.server.holdsObjects === true || ctx.objectsPresent;
}
