/**
 * Request bytes held at once, with what decoding them holds (PROTOCOL.md §2.1, §2.2 and §8.2), counted
 * twice: per workspace object, over every HTTP body and socket frame it is processing, and for the whole
 * process, over every object, with the answers sockets have queued and not read (answer-share.ts). A Durable
 * Object has 128 MB: sixteen concurrent 16 MiB uploads took one object from 389 to 842 MiB, and three 14 MB
 * pushes of 60,000-chunk files grew it by 150 MiB once decoded. Where many objects share a process (local
 * workerd, one isolate), per-object bounds did not bound it: eight workspaces with three 16 MiB bodies each
 * grew `ferry serve` by 521 MiB, twelve sockets that never read by 397 MiB (issue 28). A request that would
 * pass either bound is answered `rate_limited` (429, with a retry hint) before its body is read or decoded.
 *
 * The process budget is module state, shared by every object of this isolate: in `ferry serve` every
 * workspace; on Cloudflare each isolate (a few objects at most) has its own, a tighter per-object bound.
 */
import { weighCbor } from "../../protocol/cbor-weight.ts";
import { ProtocolError, RETRY_AFTER_MS } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { lapseLeases } from "./leases.ts";
import { letGoOf, reclaimIfDue } from "./reclaim.ts";

/**
 * What one host keeps in flight (two full bodies, client/engine/uploads.ts) beside the weightiest
 * push it sends: a push of 10,000 small files weighs some 14 MB decoded (protocol/cbor-weight.ts).
 * Two full bodies when they held 16 MiB; four now, but large bodies are read two at a time
 * (answer-room.ts BODY_BUDGET).
 */
export const MAX_OBJECT_INFLIGHT_BYTES = 32 * 1024 * 1024;

/**
 * The same bound for the whole process: with the runtime's copies of
 * what is counted and the garbage decoding leaves, what keeps `ferry serve`
 * within 128 MiB over idle under a mix of hostile clients (BENCHMARKS.md,
 * "Memory under hostile clients").
 */
export const MAX_PROCESS_INFLIGHT_BYTES = MAX_OBJECT_INFLIGHT_BYTES;

/**
 * Room past the process's limit for a request smaller than it (a hello, a probe, a small push or upload):
 * twenty-four uploads declaring 16 MiB, abandoned and sent again every 100 ms, kept the budget full, and an
 * honest host was refused every time, even its hello (bench:hostile-memory, bodies alone). A body this large
 * never uses it; the process holds at most the limit and this room.
 */
export const SMALL_REQUEST_ROOM = LIMITS.maxBodyBytes / 2;

/**
 * More room, past SMALL_REQUEST_ROOM, for a request of at most TINY_REQUEST_BYTES (a hello, a probe, a small
 * push, a socket request's answer room): sixteen clients sending 2 MB pushes in a loop, and sixteen sockets
 * as many frames, kept that room full too, and an honest host was refused six times in a row, its hello
 * included (bench:hostile-memory, the whole mix, 2026-12-06). Nothing larger can take this.
 */
export const TINY_REQUEST_ROOM = 1024 * 1024;
export const TINY_REQUEST_BYTES = 64 * 1024;

/** How long a refused caller is told to wait (protocol/errors.ts: the front door tells its own refusals the same). */
export { RETRY_AFTER_MS };

/**
 * How long an HTTP request waits for its turn at a full process budget before it is refused. Refused at once,
 * clients that retry every 100 ms took every byte freed, and an honest host that retries once a second was
 * refused six times in a row (bench:hostile-memory, the whole mix, 2026-12-06).
 */
export const MAX_WAIT_MS = 5000;
/** Requests waiting at once, at most: a request past them is refused without waiting. */
export const MAX_WAITING = 256;

/**
 * How often a request in line looks whether its turn has come. It looks
 * itself, in its own object's context: workerd does not let one object
 * resolve a promise another object is waiting on ("Cannot perform I/O on
 * behalf of a different Durable Object"), so a release cannot wake it.
 */
export const LINE_POLL_MS = 10;

/** A request waiting in line for the process budget (admit), until its deadline; `from` is its workspace. */
interface Waiter {
  readonly bytes: number;
  readonly until: number;
  readonly from: string;
  /** When it last looked whether its turn had come (every LINE_POLL_MS while its caller lives). */
  seen: number;
}

/**
 * A waiter that has not looked for this long while the line was looked at is gone: the runtime dropped its
 * request (its client went, or the front door cut it). Kept to its deadline, cut uploads went first (their
 * workspace admitted least lately), and an honest host's uploads were refused for as long as they came.
 * After a pause in the looking (the isolate held by one long call, an object's large SQL write), every
 * waiter has this long again (dropStale), so that a live one is not taken for gone.
 */
const GONE_AFTER_MS = 50 * LINE_POLL_MS;

/** Workspaces remembered by when they were last admitted (InflightBudget's line), at most. */
const ADMITTED_REMEMBERED = 1024;

export class InflightBudget {
  private held = 0;
  /** The most ever held at once (tests check it stays under the bound). */
  peak = 0;
  /** Requests waiting for room, in the order they came (admit). */
  private readonly line: Waiter[] = [];
  /** When each workspace was last admitted from the line (a count of admissions), and that count. */
  private readonly admitted = new Map<string, number>();
  private admissions = 0;
  /** The waiter whose turn is next (next), while the line is unchanged. */
  private chosen: Waiter | undefined;
  /** When the line was last looked at (dropStale), and when looking last resumed after a pause. */
  private looked = 0;
  private resumed = 0;

  constructor(
    readonly limit: number = MAX_OBJECT_INFLIGHT_BYTES,
    /** A budget this one's bytes count against too (the process's). */
    private readonly parent: InflightBudget | null = null,
    private readonly scope = "the workspace",
    /** Room past `limit` for a request under it (SMALL_REQUEST_ROOM), 0 for none. */
    private readonly smallRoom = 0,
    /** Whether what is released is garbage to collect (reclaim.ts): not for bytes another budget counts too. */
    private readonly reclaims = parent === null,
  ) {}

  /**
   * Reserves `bytes` for one request, or returns the refusal. One request
   * of any allowed size is always admitted when nothing else is held. A
   * request that is not tiny is refused while others wait in line (admit):
   * a socket frame cannot wait (it is already in memory), and must not take
   * the room a waiting request is owed.
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

  /**
   * Reserves `bytes` for a request of workspace `from` that can wait (an
   * HTTP body not yet read): now, when it fits and nobody waits before it
   * (a tiny request never waits behind others), else in line until it fits,
   * or its refusal after MAX_WAIT_MS or when MAX_WAITING already wait. The
   * line serves the workspace admitted least lately first, and one
   * workspace's requests in the order they came (next). This budget's own
   * bound (a workspace's) refuses at once: only the process's keeps a line.
   */
  async admit(bytes: number, from: string, waitMs = MAX_WAIT_MS): Promise<ProtocolError | null> {
    if (this.parent !== null) {
      const own = this.refusal(0, bytes);
      if (own !== null) return own;
      const busy = await this.parent.admit(bytes, from, waitMs);
      if (busy !== null) return busy;
      // Others of this workspace may have come in meanwhile.
      const late = this.refusal(0, bytes);
      if (late !== null) this.parent.release(bytes);
      else this.count(bytes);
      return late;
    }
    const refusal = this.refusal(0, bytes);
    if (refusal === null) {
      this.count(bytes);
      this.wasAdmitted(from);
      return null;
    }
    if (this.line.length >= MAX_WAITING) return refusal;
    const me: Waiter = { bytes, until: Date.now() + waitMs, from, seen: Date.now() };
    this.line.push(me);
    this.chosen = undefined;
    try {
      for (;;) {
        const now = Date.now();
        me.seen = now;
        this.dropStale(now);
        if (this.next() === me && this.fits(0, bytes)) {
          this.count(bytes);
          this.wasAdmitted(from);
          return null;
        }
        if (now >= me.until) return this.busy();
        await new Promise((resolve) => setTimeout(resolve, LINE_POLL_MS));
      }
    } finally {
      const at = this.line.indexOf(me);
      if (at >= 0) this.line.splice(at, 1);
      if (this.chosen === me) this.chosen = undefined;
    }
  }

  /**
   * Whose turn it is: the first waiter of the workspace admitted least
   * lately. First come, first served alone, clients that sent requests
   * again and again, sixteen a second from one workspace, took every turn,
   * and an honest host of another workspace, which asks again a second
   * later, was refused five times (bench:hostile-memory, the whole mix).
   */
  private next(): Waiter | undefined {
    if (this.chosen !== undefined) return this.chosen;
    let best: Waiter | undefined;
    let bestAt = Number.POSITIVE_INFINITY;
    for (const waiter of this.line) {
      const at = this.admitted.get(waiter.from) ?? -1;
      if (at < bestAt) [best, bestAt] = [waiter, at];
    }
    this.chosen = best;
    return best;
  }

  private wasAdmitted(from: string): void {
    if (this.admitted.size >= ADMITTED_REMEMBERED) this.admitted.clear();
    this.admitted.set(from, this.admissions++);
    this.chosen = undefined;
  }

  /** Counts `bytes` already held (answers sent, not yet read), without a check. */
  add(bytes: number): void {
    this.count(bytes);
    this.parent?.add(bytes);
  }

  release(bytes: number): void {
    this.held -= bytes;
    if (this.reclaims) letGoOf(bytes);
    this.parent?.release(bytes);
  }

  /** Requests waiting in line now (tests). */
  get waiting(): number {
    return this.line.length;
  }

  /**
   * The refusal a request of `bytes` would get now, without reserving
   * anything. A new request (holding nothing yet) that is not tiny waits
   * behind those in line.
   */
  refusal(own: number, extra: number): ProtocolError | null {
    if (this.line.length > 0) this.dropStale(Date.now());
    if (own === 0 && this.line.length > 0 && extra > TINY_REQUEST_BYTES) return this.busy();
    return this.fits(own, extra) ? null : this.busy();
  }

  private fits(own: number, extra: number): boolean {
    lapseLeases();
    const tiny = this.smallRoom > 0 && extra <= TINY_REQUEST_BYTES ? TINY_REQUEST_ROOM : 0;
    const room = (extra < this.smallRoom ? this.smallRoom : 0) + tiny;
    return this.held <= own || this.held + extra <= this.limit + room;
  }

  /**
   * Drops requests gone or past their deadline: one whose caller went away
   * (its client hung up, and workerd dropped its wait) never takes itself
   * out of line, and would hold up every request and frame behind it.
   */
  private dropStale(now: number): void {
    if (now - this.looked > LINE_POLL_MS * 10) this.resumed = now;
    this.looked = now;
    for (let i = this.line.length - 1; i >= 0; i--) {
      const w = this.line[i] as Waiter;
      if (w.until + LINE_POLL_MS * 10 >= now && Math.max(w.seen, this.resumed) + GONE_AFTER_MS >= now) continue;
      if (this.chosen === w) this.chosen = undefined;
      this.line.splice(i, 1);
    }
  }

  private count(bytes: number): void {
    if (this.reclaims) reclaimIfDue();
    this.held += bytes;
    this.peak = Math.max(this.peak, this.held);
  }

  private busy(): ProtocolError {
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
