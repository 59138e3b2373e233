/**
 * What a peer sends through the front door (front-door.ts), followed byte
 * by byte without changing any: HTTP/1.1 requests (a head, then a body of
 * its Content-Length or its chunks), and after an upgrade the runtime
 * accepts, WebSocket frames (RFC 6455 §5.2). Following them is what lets
 * the door hold each large frame to the frames' budget (frame-budget.ts)
 * and a deadline, and know a WebSocket's connection from an HTTP one.
 *
 * A WebSocket upgrade is followed only as a connection's first request,
 * as browsers and WebSocket libraries send it: an upgrade after another
 * request is cut, since where its frames start could not be known without
 * following every answer too. A request the door cannot follow (a malformed
 * length, a transfer coding other than chunked, a head past MAX_HEAD_BYTES)
 * is passed on as far as its head, and nothing after it: the runtime
 * answers it (`400`, and closes).
 */
import { FRAME_FREE_BYTES, type FrameBudget } from "./frame-budget.ts";
import { afterHead, CR, headEnd, LF } from "./request-head.ts";

/** What a connection's follower does to it. */
export interface InboundSink {
  /** Passes bytes on to the runtime. */
  forward(bytes: Buffer): void;
  /** Ends the connection, both sides. */
  cut(): void;
  /** Stops or starts reading the peer, for the follower's own reasons (an answer or the budget awaited). */
  hold(held: boolean): void;
}

/** Longest request head followed (workerd's own limit is lower): past it the request is passed on unfollowed. */
const MAX_HEAD_BYTES = 128 * 1024;
/** Longest chunk-size or trailer line followed. */
const MAX_LINE_BYTES = 4 * 1024;
/** A large frame must arrive within this, plus FRAME_MS_PER_MIB for each MiB: as a body must (README). */
const FRAME_BASE_MS = 10_000;
const FRAME_MS_PER_MIB = 1000;

type State =
  | { readonly kind: "head"; readonly first: boolean }
  | { readonly kind: "body"; left: number }
  | { readonly kind: "chunk-size" }
  | { readonly kind: "chunk-data"; left: number }
  | { readonly kind: "chunk-end" }
  | { readonly kind: "trailers" }
  | { readonly kind: "answer" }
  | { readonly kind: "frame-head" }
  | { readonly kind: "frame-payload"; left: number; readonly endsMessage: boolean }
  | { readonly kind: "unfollowed" };

const SWITCHING = Buffer.from("HTTP/1.1 101 ");
const EMPTY = Buffer.alloc(0);

export class Inbound {
  private state: State = { kind: "head", first: true };
  private unread: Buffer = EMPTY;
  /** The head being read, as far as it was passed on: `headLength` bytes of `head`, which grows by doubling. */
  private head: Buffer = EMPTY;
  private headLength = 0;
  /** The budget this connection's frame in transit holds, and the grant it waits on. */
  private taken = 0;
  private waitingFor: (() => void) | undefined;
  private deadline: NodeJS.Timeout | undefined;
  /** The bytes so far of a fragmented message in transit (its frames before the final one), or undefined. */
  private message: number | undefined;
  private done = false;
  /** What `pass` took of the bytes being followed and not yet forwarded: forwarded together, once they are followed. */
  private passed: Buffer[] = [];

  constructor(
    private readonly sink: InboundSink,
    private readonly budget: FrameBudget,
  ) {}

  /** True once the runtime accepted this connection's upgrade: its peer sends frames. */
  get websocket(): boolean {
    return this.state.kind === "frame-head" || this.state.kind === "frame-payload";
  }

  /** The peer's next bytes. */
  push(chunk: Buffer): void {
    this.unread = this.unread.length === 0 ? chunk : Buffer.concat([this.unread, chunk]);
    this.follow();
  }

  /** The runtime's first bytes on this connection: the answer to its first request. */
  answered(first: Buffer): void {
    if (this.state.kind !== "answer") return;
    this.state = first.subarray(0, SWITCHING.length).equals(SWITCHING)
      ? { kind: "frame-head" }
      : { kind: "head", first: false };
    this.sink.hold(false);
    this.follow();
  }

  /** The connection ended: what it held of the budget goes back. */
  close(): void {
    this.done = true;
    clearTimeout(this.deadline);
    if (this.waitingFor !== undefined) this.budget.forget(this.waitingFor);
    this.waitingFor = undefined;
    if (this.taken > 0) this.budget.give(this.taken);
    this.taken = 0;
  }

  private follow(): void {
    while (!this.done && this.unread.length > 0 && this.step()) {}
    this.flush();
  }

  /**
   * Forwards what was passed, in one write: the runtime gets the bytes as the peer sent them,
   * not cut at each line and chunk followed (workerd dropped the answer to a request answered
   * before its chunked body was read, when the body came in pieces).
   */
  private flush(): void {
    const passed = this.passed;
    if (passed.length === 0) return;
    this.passed = [];
    if (!this.done) this.sink.forward(passed.length === 1 ? (passed[0] as Buffer) : Buffer.concat(passed));
  }

  /** Follows what `unread` holds of the current state; false when it must wait (more bytes, an answer, the budget). */
  private step(): boolean {
    const state = this.state;
    switch (state.kind) {
      case "head": {
        // Passed on as it comes, each byte looked at once: a head sent a byte at a time costs no more than one sent whole.
        const tail = this.head.subarray(Math.max(0, this.headLength - 2), this.headLength);
        const window = tail.length === 0 ? this.unread : Buffer.concat([tail, this.unread]);
        const end = headEnd(window);
        const ends = end >= 0;
        this.keepHead(this.pass(ends ? end - tail.length : this.unread.length));
        if (!ends) {
          if (this.headLength > MAX_HEAD_BYTES) this.unfollowed(0);
          return false;
        }
        const head = this.head.toString("latin1", 0, this.headLength);
        this.head = EMPTY;
        this.headLength = 0;
        const next = afterHead(head, state.first);
        if (next.kind === "cut") this.sink.cut();
        this.state = next.kind === "cut" ? { kind: "unfollowed" } : next;
        if (this.state.kind === "answer" || this.state.kind === "unfollowed") this.sink.hold(true);
        return this.state.kind !== "answer" && this.state.kind !== "unfollowed";
      }
      case "body":
      case "chunk-data": {
        const n = Math.min(state.left, this.unread.length);
        this.pass(n);
        state.left -= n;
        if (state.left === 0)
          this.state = state.kind === "body" ? { kind: "head", first: false } : { kind: "chunk-end" };
        return true;
      }
      case "chunk-size":
      case "chunk-end":
      case "trailers": {
        const eol = this.unread.indexOf(LF);
        if (eol < 0) {
          if (this.unread.length > MAX_LINE_BYTES) this.unfollowed(this.unread.length);
          return false;
        }
        const raw = this.pass(eol + 1);
        const line = raw.toString("latin1", 0, eol > 0 && raw[eol - 1] === CR ? eol - 1 : eol);
        if (state.kind === "trailers") {
          if (line === "") this.state = { kind: "head", first: false };
          return true;
        }
        if (state.kind === "chunk-end") {
          // The line end after a chunk's bytes, and nothing else.
          if (line !== "") this.unfollowed(0);
          else this.state = { kind: "chunk-size" };
          return line === "";
        }
        const size = /^[0-9a-fA-F]{1,12}(?=;|[ \t]*$)/.exec(line)?.[0];
        if (size === undefined) {
          this.unfollowed(0);
          return false;
        }
        const n = Number.parseInt(size, 16);
        this.state = n === 0 ? { kind: "trailers" } : { kind: "chunk-data", left: n };
        return true;
      }
      case "frame-head":
        return this.frameHead();
      case "frame-payload": {
        const n = Math.min(state.left, this.unread.length);
        this.pass(n);
        state.left -= n;
        if (state.left === 0) this.frameEnded();
        return true;
      }
      case "answer":
      case "unfollowed":
        return false;
    }
  }

  /**
   * A frame's header (RFC 6455 §5.2): its payload's length, once the budget has room for it.
   * The runtime holds a fragmented message's frames until its final one: they count as one,
   * free while under FRAME_FREE_BYTES together, and past it taking the whole budget (its size
   * is not known yet) until the message ends, within one deadline for the whole budget.
   */
  private frameHead(): boolean {
    const bytes = this.unread;
    if (bytes.length < 2) return false;
    const short = (bytes[1] as number) & 0x7f;
    const lengthBytes = short === 126 ? 2 : short === 127 ? 8 : 0;
    const headerBytes = 2 + lengthBytes + ((bytes[1] as number) & 0x80 ? 4 : 0);
    if (bytes.length < headerBytes) return false;
    const length = short === 126 ? bytes.readUInt16BE(2) : short === 127 ? Number(bytes.readBigUInt64BE(2)) : short;
    if (!Number.isSafeInteger(length)) {
      this.sink.cut();
      return false;
    }
    const control = ((bytes[0] as number) & 0x08) !== 0;
    const final = ((bytes[0] as number) & 0x80) !== 0;
    const fragment = !control && (this.message !== undefined || !final);
    const counted = fragment ? (this.message ?? 0) + length : length;
    const share = fragment ? (counted < FRAME_FREE_BYTES ? 0 : this.budget.capacity) : this.budget.share(length);
    if (share > 0 && this.taken === 0) {
      const grant = () => {
        this.waitingFor = undefined;
        this.taken = share;
        this.sink.hold(false);
        this.follow();
      };
      if (!this.budget.take(share, grant)) {
        this.waitingFor = grant;
        this.sink.hold(true);
        return false;
      }
      this.taken = share;
    }
    if (this.taken > 0 && this.deadline === undefined) {
      const bytesDue = fragment ? this.budget.capacity : length;
      this.deadline = setTimeout(() => this.sink.cut(), FRAME_BASE_MS + (FRAME_MS_PER_MIB * bytesDue) / (1024 * 1024));
    }
    if (fragment) this.message = counted;
    this.pass(headerBytes);
    this.state = { kind: "frame-payload", left: length, endsMessage: fragment && final };
    if (length === 0) this.frameEnded();
    return true;
  }

  private frameEnded(): void {
    const state = this.state;
    if (state.kind === "frame-payload" && state.endsMessage) this.message = undefined;
    this.state = { kind: "frame-head" };
    // A control frame between a message's fragments leaves the message's share taken.
    if (this.message !== undefined) return;
    clearTimeout(this.deadline);
    this.deadline = undefined;
    if (this.taken > 0) this.budget.give(this.taken);
    this.taken = 0;
  }

  private keepHead(bytes: Buffer): void {
    if (this.headLength + bytes.length > this.head.length) {
      const grown = Buffer.allocUnsafe(Math.max(1024, 2 * (this.headLength + bytes.length)));
      this.head.copy(grown, 0, 0, this.headLength);
      this.head = grown;
    }
    bytes.copy(this.head, this.headLength);
    this.headLength += bytes.length;
  }

  /** Passes on the first `n` unread bytes, and answers them. */
  private pass(n: number): Buffer {
    const bytes = this.unread.subarray(0, n);
    this.unread = n === this.unread.length ? EMPTY : this.unread.subarray(n);
    if (n === 0) return bytes;
    if (this.websocket) {
      // Frames go as they come (what a 16 MiB frame's reads bring is one pass each).
      this.flush();
      if (!this.done) this.sink.forward(bytes);
    } else this.passed.push(bytes);
    return bytes;
  }

  /** Passes on `n` bytes of a request it cannot follow, and nothing after: the peer is read no more. */
  private unfollowed(n: number): void {
    this.pass(n);
    this.state = { kind: "unfollowed" };
    this.sink.hold(true);
  }
}
