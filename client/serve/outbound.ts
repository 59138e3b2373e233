/**
 * What the runtime answers on one connection through the front door
 * (front-door.ts), followed without changing a byte: where each answer's
 * head ends, so the door knows when the runtime has answered a request
 * (runtime-turns.ts) and is done working on it; its body streams after.
 * workerd writes every answer as RFC 9112 says: a head, then a body of its
 * Content-Length or its chunks, none for HEAD, 1xx, 204 and 304, and
 * until the end for one with neither (the connection then closes).
 */
import { afterHead, CR, chunkSize, headEnd, LF } from "./request-head.ts";

type State =
  | { readonly kind: "head" }
  | { readonly kind: "body"; left: number }
  | { readonly kind: "chunk-size" }
  | { readonly kind: "chunk-data"; left: number }
  | { readonly kind: "trailers" }
  /** The rest is one body (no length), or frames after a 101: nothing more to follow. */
  | { readonly kind: "done" };

const EMPTY = Buffer.alloc(0);

export class Outbound {
  private state: State = { kind: "head" };
  private unread: Buffer = EMPTY;
  /** For each request passed on and not yet answered: whether it was a HEAD (its answer has no body). */
  private readonly heads: boolean[] = [];

  /** `answered` is called once the head of each request's final answer (not a 1xx) has come. */
  constructor(private readonly answered: () => void) {}

  /** A request was passed on to the runtime. */
  asked(method: string): void {
    this.heads.push(method === "HEAD");
  }

  /** Whether every request passed on has been answered whole (none waits, no answer's body is on its way). */
  get between(): boolean {
    return this.state.kind === "head" && this.unread.length === 0 && this.heads.length === 0;
  }

  /** The runtime's next bytes. */
  push(chunk: Buffer): void {
    if (this.state.kind === "done") return;
    this.unread = this.unread.length === 0 ? chunk : Buffer.concat([this.unread, chunk]);
    while (this.unread.length > 0 && this.step()) {}
  }

  private step(): boolean {
    const state = this.state;
    switch (state.kind) {
      case "head": {
        const end = headEnd(this.unread);
        if (end < 0) return false;
        const head = this.take(end).toString("latin1");
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? Number.NaN);
        if (status >= 100 && status < 200 && status !== 101) return true; // interim: the final answer follows
        const bodiless = this.heads.shift() === true || status === 204 || status === 304;
        this.answered();
        if (status === 101 || Number.isNaN(status)) this.state = { kind: "done" };
        else if (!bodiless) this.state = bodyAfter(head);
        return true;
      }
      case "body":
      case "chunk-data": {
        const n = Math.min(state.left, this.unread.length);
        this.take(n);
        state.left -= n;
        if (state.left === 0) this.state = state.kind === "body" ? { kind: "head" } : { kind: "chunk-size" };
        return true;
      }
      case "chunk-size":
      case "trailers": {
        const eol = this.unread.indexOf(LF);
        if (eol < 0) return false;
        const raw = this.take(eol + 1);
        const line = raw.toString("latin1", 0, eol > 0 && raw[eol - 1] === CR ? eol - 1 : eol);
        if (state.kind === "trailers") {
          if (line === "") this.state = { kind: "head" };
          return true;
        }
        if (line === "") return true; // the line end after a chunk's bytes
        const size = chunkSize(line);
        this.state =
          size === null ? { kind: "done" } : size === 0 ? { kind: "trailers" } : { kind: "chunk-data", left: size };
        return true;
      }
      case "done":
        return false;
    }
  }

  private take(n: number): Buffer {
    const bytes = this.unread.subarray(0, n);
    this.unread = n === this.unread.length ? EMPTY : this.unread.subarray(n);
    return bytes;
  }
}

/** What follows an answer's head that has a body: its length, its chunks, or everything until the end. */
function bodyAfter(head: string): State {
  const next = afterHead(head, false);
  if (next.kind === "body") return next;
  if (next.kind === "chunk-size") return next;
  if (next.kind === "head") return /\ncontent-length:/i.test(head) ? next : { kind: "done" };
  return { kind: "done" };
}
