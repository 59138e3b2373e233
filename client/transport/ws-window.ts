/**
 * The WebSocket transport's request window (PROTOCOL.md §8.2): requests
 * waiting for the socket, and requests sent and not yet answered, bounded by
 * the server's `maxInflight` and by two frames' worth of bytes. Until hello
 * has advertised the server's limits, one request at a time.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { fitsWindow } from "../../protocol/flow.ts";
import { LIMITS, type Limits } from "../../protocol/limits.ts";
import { OPS, type OpName } from "../../protocol/ops.ts";

export interface Pending {
  readonly id: number;
  readonly op: OpName;
  readonly frame: Uint8Array;
  readonly resolve: (body: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Transient refusals so far (rate_limited, internal, unavailable). */
  refusals: number;
  /** Drops the socket if the answer takes too long; set while in flight. */
  timer: NodeJS.Timeout | null;
}

export class RequestWindow {
  private readonly queue: Pending[] = [];
  private readonly inflight = new Map<number, Pending>();
  private bytes = 0;
  /** The window's bounds: one request at a time until hello advertises the server's. */
  private limits: Pick<Limits, "maxInflight" | "maxBodyBytes"> = { maxInflight: 1, maxBodyBytes: LIMITS.maxBodyBytes };

  /** The refusal of a frame larger than the server reads, or null when it fits. */
  oversize(op: OpName, frame: Uint8Array): ProtocolError | null {
    const limit = this.limits.maxBodyBytes;
    if (frame.byteLength <= limit) return null;
    const message = `a ${op} frame of ${frame.byteLength} bytes is over maxBodyBytes (${limit})`;
    return new ProtocolError("payload_too_large", message, { limit });
  }

  /** Requests waiting for the socket. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Takes the window and frame size a hello answer advertised. */
  adoptHello(body: unknown): void {
    let limits: Limits;
    try {
      limits = OPS.hello.decodeResponse(body).limits;
    } catch {
      return; // The caller's decoder reports a malformed hello.
    }
    this.limits = { maxInflight: Math.max(1, limits.maxInflight), maxBodyBytes: limits.maxBodyBytes };
  }

  enqueue(p: Pending): void {
    this.queue.push(p);
  }

  /** Puts a request ahead of every other waiting one (a retry, or the hello a new socket starts with). */
  first(p: Pending): void {
    this.queue.unshift(p);
  }

  isWaiting(op: OpName): boolean {
    return this.queue.some((p) => p.op === op);
  }

  /** The next request the window lets out, now counted in flight; null when it is full or nothing waits. */
  next(): Pending | null {
    const p = this.queue[0];
    if (p === undefined) return null;
    if (!fitsWindow({ requests: this.inflight.size, bytes: this.bytes }, p.frame.byteLength, this.limits)) return null;
    this.queue.shift();
    this.inflight.set(p.id, p);
    this.bytes += p.frame.byteLength;
    return p;
  }

  /**
   * The request an answer is for, no longer in flight. An answer without an
   * id is about a frame the server could not read: only a lone request in
   * flight can be its cause.
   */
  answered(id: number | null): Pending | undefined {
    const p =
      id !== null ? this.inflight.get(id) : this.inflight.size === 1 ? [...this.inflight.values()][0] : undefined;
    if (p) this.settle(p);
    return p;
  }

  /** The socket dropped: every request in flight waits again, first, in the order it was sent. */
  resendInflight(): void {
    const sent = [...this.inflight.values()].sort((a, b) => a.id - b.id);
    for (const p of sent) this.settle(p);
    this.queue.unshift(...sent);
  }

  /** Empties the window: every request in it, in flight first. */
  drain(): Pending[] {
    const all = [...this.inflight.values()];
    for (const p of all) this.settle(p);
    return [...all, ...this.queue.splice(0)];
  }

  private settle(p: Pending): void {
    if (p.timer) clearTimeout(p.timer);
    p.timer = null;
    this.inflight.delete(p.id);
    this.bytes -= p.frame.byteLength;
  }
}
