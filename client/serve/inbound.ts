/**
 * What a peer sends through the front door (front-door.ts), followed byte
 * by byte without changing any: HTTP/1.1 requests (a head, then a body of
 * its Content-Length or its chunks), and after an upgrade the runtime
 * accepts, WebSocket frames (RFC 6455 §5.2). Following them is what lets
 * the door pass a request with a large body, or a large frame, only with a
 * turn of the runtime (runtime-turns.ts) and frames within their budget
 * and deadline (frame-gate.ts), and know a WebSocket from an HTTP one.
 *
 * A WebSocket upgrade is followed only as a connection's first request,
 * as browsers and WebSocket libraries send it: an upgrade after another
 * request is cut. A request the door cannot follow (a malformed length, a
 * transfer coding other than chunked, a head past MAX_HEAD_BYTES) is
 * passed on as far as its head, and nothing after it: the runtime answers
 * it (`400`, and closes).
 */
import { busyAnswer } from "./door-refusal.ts";
import { FRAME_FREE_BYTES } from "./frame-budget.ts";
import { FrameGate, frameHeader } from "./frame-gate.ts";
import type { DoorLimits } from "./front-door.ts";
import { type AfterHead, afterHead, CR, chunkSize, HeadReader, LF } from "./request-head.ts";
import type { Pace, Turn } from "./runtime-turns.ts";

/** What a connection's follower does to it. */
export interface InboundSink {
  /** Passes bytes on to the runtime. */
  forward(bytes: Buffer): void;
  /** Ends the connection, both sides. */
  cut(): void;
  /** Stops or starts reading the peer, for the follower's own reasons (an answer, the budget or a turn awaited). */
  hold(held: boolean): void;
  /** A request with this method was passed on: its answer is followed (outbound.ts). */
  asked(method: string): void;
  /** What the peer has sent, and for how long it was read, in all (runtime-turns.ts TurnHolder). */
  pace(): Pace;
  /** Sends the peer `answer` in the runtime's stead, then ends the connection. */
  refuse(answer: Buffer): void;
}

/** Longest request head followed (workerd's own limit is lower): past it the request is passed on unfollowed. */
const MAX_HEAD_BYTES = 128 * 1024;
/** Longest chunk-size or trailer line followed. */
const MAX_LINE_BYTES = 4 * 1024;

type State =
  | { readonly kind: "head"; readonly first: boolean }
  | { readonly kind: "asking"; readonly head: Buffer; readonly method: string; readonly next: AfterHead }
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
/** A request body's states. */
const BODY = new Set<State["kind"]>(["body", "chunk-size", "chunk-data", "chunk-end", "trailers"]);

export class Inbound {
  private state: State = { kind: "head", first: true };
  private unread: Buffer = EMPTY;
  private readonly heads: HeadReader;
  private done = false;
  /** What `pass` took of the bytes being followed and not yet forwarded: forwarded together, once they are followed. */
  private passed: Buffer[] = [];
  private readonly turn: Turn;
  private readonly frames: FrameGate;
  /** Whether the request being passed on has a large body (FRAME_FREE_BYTES or more, or chunks): it takes a turn. */
  private large = false;

  constructor(
    private readonly sink: InboundSink,
    private readonly door: DoorLimits,
  ) {
    this.heads = new HeadReader(door.heads, () => this.sink.cut());
    this.turn = door.turns.connection({
      // Whether a request's body or a large frame is being passed on.
      sending: () => (this.state.kind === "frame-payload" ? this.frames.holds : BODY.has(this.state.kind)),
      pace: () => this.sink.pace(),
      cut: () => this.sink.cut(),
      // A request that waited too long for its turn is told to come again (a frame's socket is cut).
      refuse: () =>
        this.state.kind === "asking"
          ? this.sink.refuse(busyAnswer(this.state.head.toString("latin1", 0, 1024)))
          : this.sink.cut(),
    });
    this.frames = new FrameGate(door.frames, this.turn, this.resume, () => this.sink.cut());
  }

  /** True once the runtime accepted this connection's upgrade: its peer sends frames. */
  get websocket(): boolean {
    return this.state.kind === "frame-head" || this.state.kind === "frame-payload";
  }

  /** Whether the peer, answered at least once, has sent nothing of a next request yet (not a WebSocket). */
  get between(): boolean {
    return this.state.kind === "head" && !this.state.first && this.unread.length === 0 && this.heads.size === 0;
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
    if (this.websocket) this.turn.use(this.door.turns.frames);
    this.sink.hold(false);
    this.follow();
  }

  /** The runtime answered: an answer's head (outbound.ts), or on a WebSocket any bytes (it took the frames before). */
  answerCame(): void {
    this.turn.answered(this.websocket);
  }

  /** The connection ended: what it held of the budget goes back. */
  close(): void {
    this.done = true;
    this.turn.close();
    this.frames.close();
    this.heads.close();
  }

  private follow(): void {
    while (!this.done && (this.unread.length > 0 || this.state.kind === "asking") && this.step()) {}
    this.flush();
  }

  /**
   * Forwards what was passed, in one write: the runtime gets the bytes as the peer sent them, not cut at each
   * line and chunk followed (workerd dropped the answer to a request answered before its chunked body was read).
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
        // Read whole before any of it passes: it may wait for a turn (runtime-turns.ts).
        const { used, whole } = this.heads.read(this.unread);
        this.consume(used);
        if (!whole) {
          if (this.heads.size > MAX_HEAD_BYTES) {
            this.passed.push(this.heads.take());
            this.unfollowed(0);
          }
          return false;
        }
        const head = this.heads.take();
        const text = head.toString("latin1");
        const next = afterHead(text, state.first);
        if (next.kind === "cut") {
          this.sink.cut();
          this.state = { kind: "unfollowed" };
          return false;
        }
        this.state = { kind: "asking", head, method: text.slice(0, text.indexOf(" ")), next };
        return this.ask();
      }
      case "asking":
        return this.ask();
      case "body":
      case "chunk-data": {
        if (!this.mayPass()) return false;
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
        if (!this.mayPass()) return false;
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
        const n = chunkSize(line);
        if (n === null) this.unfollowed(0);
        else this.state = n === 0 ? { kind: "trailers" } : { kind: "chunk-data", left: n };
        return n !== null;
      }
      case "frame-head": {
        const header = frameHeader(this.unread);
        if (header === "bad") this.sink.cut();
        if (header === null || header === "bad") return false;
        const admitted = this.frames.admit(header);
        if (admitted === null) return this.await();
        this.pass(header.headerBytes);
        this.state = { kind: "frame-payload", left: header.length, endsMessage: admitted.endsMessage };
        if (header.length === 0) this.frameEnded();
        return true;
      }
      case "frame-payload": {
        if (!this.frames.mayPass()) return this.await();
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

  private frameEnded(): void {
    this.frames.ended(this.state.kind === "frame-payload" && this.state.endsMessage);
    this.state = { kind: "frame-head" };
  }

  /** Passes on a head read whole once the connection has a turn, and follows what it says comes next. */
  private ask(): boolean {
    const state = this.state;
    if (state.kind !== "asking") return true;
    this.large =
      state.next.kind === "chunk-size" || (state.next.kind === "body" && state.next.left >= FRAME_FREE_BYTES);
    if (this.large && !this.turn.need(this.resume)) return this.await();
    this.passed.push(state.head);
    this.turn.asked();
    this.sink.asked(state.method);
    this.state = state.next.kind === "cut" ? { kind: "unfollowed" } : state.next;
    return this.state.kind !== "answer" && this.state.kind !== "unfollowed" ? true : this.await();
  }

  /** A large body's bytes pass with a turn, or once the runtime has answered its request (it drops the rest). */
  private mayPass(): boolean {
    return !this.large || !this.turn.answering || this.turn.need(this.resume) || this.await();
  }

  /** Reads the peer no further until `resume`. */
  private await(): false {
    this.sink.hold(true);
    return false;
  }

  private readonly resume = () => {
    this.sink.hold(false);
    this.follow();
  };

  /** Takes the first `n` unread bytes, and answers them. */
  private consume(n: number): Buffer {
    const bytes = this.unread.subarray(0, n);
    this.unread = n === this.unread.length ? EMPTY : this.unread.subarray(n);
    return bytes;
  }

  /** Passes on the first `n` unread bytes, and answers them. */
  private pass(n: number): Buffer {
    const bytes = this.consume(n);
    if (n === 0) return bytes;
    if (this.websocket) {
      // Frames go as they come (what a full frame's reads bring is one pass each).
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
