/**
 * Request bytes held at once, with what decoding them holds (PROTOCOL.md
 * §2.1, §2.2 and §8.2), counted twice: per workspace object, over every
 * HTTP body and socket frame it is processing, and for the whole process,
 * over every object, with the answers sockets have queued and not read
 * (worker/do/answer-credit.ts). A Durable Object has 128 MB: sixteen
 * concurrent 16 MiB uploads took one object from 389 to 842 MiB, and three
 * 14 MB pushes of 60,000-chunk files grew it by 150 MiB once decoded. And
 * where many objects share a process (every object of local workerd, one
 * isolate), per-object bounds did not bound it: eight workspaces with three
 * 16 MiB bodies each grew `ferry serve` by 521 MiB, twelve sockets that
 * never read by 397 MiB (issue 28). A request that would pass either bound
 * is answered `rate_limited` (429, with a retry hint) before its body is
 * read, or before it is decoded.
 *
 * The process budget is module state: shared by every object of this
 * isolate. In local workerd (`ferry serve`) that is every workspace; on
 * Cloudflare each isolate (a few objects at most) has its own, which only
 * makes it a tighter per-object bound there.
 */
import { weighCbor } from "../../protocol/cbor-weight.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";

/**
 * Two full request bodies: what one host keeps in flight (client/engine/uploads.ts), and as many as
 * the reused body buffers hold (body-buffers.ts), so no admitted body leaves a fresh 16 MiB buffer
 * behind for the garbage collector.
 */
export const MAX_OBJECT_INFLIGHT_BYTES = 2 * LIMITS.maxBodyBytes;

/**
 * The same two bodies for the whole process: with the runtime's copies of
 * what is counted and the garbage decoding leaves, what keeps `ferry serve`
 * within 128 MiB over idle under a mix of hostile clients (BENCHMARKS.md,
 * "Memory under hostile clients").
 */
export const MAX_PROCESS_INFLIGHT_BYTES = MAX_OBJECT_INFLIGHT_BYTES;

/**
 * Room past the process's limit for a request smaller than it (a hello, a
 * probe, a push of a few files, an upload of a few MiB): twenty-four uploads
 * declaring 16 MiB, abandoned and sent again every 100 ms, kept the budget
 * full, and an honest host, which tries six times a second apart, was
 * refused every time, even its hello (bench:hostile-memory, bodies alone).
 * A body this large or larger never uses it, so the bodies that fill the
 * budget leave it to the small ones; the process holds at most the limit
 * and this room.
 */
export const SMALL_REQUEST_ROOM = LIMITS.maxBodyBytes / 2;

/**
 * More room, past SMALL_REQUEST_ROOM, for a request of at most
 * TINY_REQUEST_BYTES (a hello, a probe or a push of a few files, a socket
 * request's answer room): sixteen clients sending 2 MB pushes in a loop,
 * and sixteen sockets as many frames, are all "small" and kept that room
 * full too, and an honest host was refused six times in a row, its hello
 * included (bench:hostile-memory, the whole mix, 2026-12-06). Nothing
 * larger than a tiny request can take this.
 */
export const TINY_REQUEST_ROOM = 1024 * 1024;
export const TINY_REQUEST_BYTES = 64 * 1024;

/** How long a refused caller is told to wait before sending again (Retry-After, and `retryAfterMs`). */
export const RETRY_AFTER_MS = 1000;

export class InflightBudget {
  private held = 0;
  /** The most ever held at once (tests check it stays under the bound). */
  peak = 0;

  constructor(
    readonly limit: number = MAX_OBJECT_INFLIGHT_BYTES,
    /** A budget this one's bytes count against too (the process's). */
    private readonly parent: InflightBudget | null = null,
    private readonly scope = "the workspace",
    /** Room past `limit` for a request under it (SMALL_REQUEST_ROOM), 0 for none. */
    private readonly smallRoom = 0,
  ) {}

  /**
   * Reserves `bytes` for one request, or returns the refusal. One request
   * of any allowed size is always admitted when nothing else is held.
   */
  reserve(bytes: number): ProtocolError | null {
    return this.grow(0, bytes);
  }

  /**
   * Adds `extra` to a request that holds `own` already (its body, reserved
   * before it was read; the extra is what decoding it will hold), or
   * returns the refusal: as reserve's, with only other requests in flight.
   */
  grow(own: number, extra: number): ProtocolError | null {
    const refusal = this.refusal(own, extra) ?? this.parent?.refusal(own, extra) ?? null;
    if (refusal === null) this.add(extra);
    return refusal;
  }

  /** Counts `bytes` already held (answers sent, not yet read), without a check. */
  add(bytes: number): void {
    this.held += bytes;
    this.peak = Math.max(this.peak, this.held);
    this.parent?.add(bytes);
  }

  release(bytes: number): void {
    this.held -= bytes;
    this.parent?.release(bytes);
  }

  /** The refusal a request of `bytes` would get now, without reserving anything (the Worker's early check). */
  refusal(own: number, extra: number): ProtocolError | null {
    const tiny = this.smallRoom > 0 && extra <= TINY_REQUEST_BYTES ? TINY_REQUEST_ROOM : 0;
    const room = (extra < this.smallRoom ? this.smallRoom : 0) + tiny;
    if (this.held <= own || this.held + extra <= this.limit + room) return null;
    return new ProtocolError(
      "rate_limited",
      `${this.scope} is busy: at most ${this.limit} request bytes in flight; retry in ${RETRY_AFTER_MS} ms`,
      { limit: this.limit, retryAfterMs: RETRY_AFTER_MS },
    );
  }
}

/** The process's budget (module state: every object of this isolate counts against it). */
export const PROCESS_BUDGET = new InflightBudget(MAX_PROCESS_INFLIGHT_BYTES, null, "the server", SMALL_REQUEST_ROOM);

/**
 * What decoding `body` will hold beside its bytes (protocol/cbor-weight.ts),
 * or its refusal: past `maxBodyItems` items, malformed, or using tags, found
 * before anything of it is decoded.
 */
export function decodedWeight(body: Uint8Array): number | ProtocolError {
  try {
    return weighCbor(body, LIMITS.maxBodyItems).bytes;
  } catch (e) {
    if (e instanceof ProtocolError) return e;
    throw e;
  }
}
