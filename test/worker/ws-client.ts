/**
 * A test client for the sync socket in workerd: opens `/sync` through the
 * Worker (so auth runs as in production), sends frames, and hands out what
 * comes back as answers (matched by id), pokes, and the close.
 */
import { env, SELF } from "cloudflare:test";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import type { WireError } from "../../protocol/errors.ts";
import type { Rights } from "../../protocol/token.ts";
import { signToken } from "../../protocol/token.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";

export const BASE = "http://ferry.test/v1/workspaces";

export type Answer = { id: number | null; body?: Record<string, unknown>; error?: WireError };

let counter = 0;

export function freshName(label = "ws"): string {
  return `${label}-${Date.now()}-${counter++}`;
}

export function stubOf(name: string): DurableObjectStub<WorkspaceObject> {
  return env.WORKSPACE.get(env.WORKSPACE.idFromName(name));
}

export function tokenFor(name: string, rights: Rights = "rw", exp = Math.floor(Date.now() / 1000) + 600): string {
  return signToken({ ws: name, rights, exp }, env.FERRY_SECRET as string);
}

export function upgrade(name: string, token: string | null): Promise<Response> {
  const headers: Record<string, string> = { upgrade: "websocket" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return SELF.fetch(`${BASE}/${name}/sync`, { headers });
}

export async function openSocket(name: string, rights: Rights = "rw", exp?: number): Promise<TestSocket> {
  const res = await upgrade(name, tokenFor(name, rights, exp));
  if (res.status !== 101 || !res.webSocket) throw new Error(`upgrade answered ${res.status}: ${await res.text()}`);
  res.webSocket.accept();
  return new TestSocket(res.webSocket);
}

/**
 * How long a wait on the socket may take before it fails. A bound on a hang,
 * not on speed: at load 20 the object answered a flood of 100 hellos slower
 * than the 5 s this was (ws-flow's flood case, CI-like load, 09:14 run).
 */
const ANSWER_MS = 25_000;

export class TestSocket {
  readonly answers = new Map<number | null, Answer[]>();
  readonly pokes: number[] = [];
  /** Marks the server sent (PROTOCOL.md §8.2), in order. */
  readonly marks: Uint8Array[] = [];
  /** Reply to each mark as a host does; a test of a socket that never reads turns it off. */
  ackMarks = true;
  readonly frames: unknown[] = [];
  closed: { code: number; reason: string } | null = null;
  private nextId = 1;
  private waiters: (() => void)[] = [];

  constructor(readonly ws: WebSocket) {
    // Binary frames arrive as Blob by default (websocket_standard_binary_type).
    ws.binaryType = "arraybuffer";
    ws.addEventListener("message", (event) => {
      const value = decodeCbor(new Uint8Array(event.data as ArrayBuffer)) as Record<string, unknown>;
      this.frames.push(value);
      if ("poke" in value) this.pokes.push((value.poke as { rev: number }).rev);
      else if ("mark" in value) {
        this.marks.push(value.mark as Uint8Array);
        if (this.ackMarks) this.ack(value.mark as Uint8Array);
      } else {
        const id = (value.id ?? null) as number | null;
        const list = this.answers.get(id) ?? [];
        list.push(value as Answer);
        this.answers.set(id, list);
      }
      this.wake();
    });
    ws.addEventListener("close", (event) => {
      this.closed = { code: event.code, reason: event.reason };
      this.wake();
    });
  }

  /** Sends one request frame and returns its id (not waiting for the answer). */
  send(op: string, body: unknown, id = this.nextId++): number {
    this.ws.send(encodeCbor({ id, op, body }));
    return id;
  }

  /** Acknowledges a mark: everything before it has been read. */
  ack(mark: Uint8Array): void {
    this.ws.send(encodeCbor({ ack: mark }));
  }

  sendRaw(data: Uint8Array | string): void {
    this.ws.send(data);
  }

  /** Sends a request and waits for its answer. */
  async request(op: string, body: unknown): Promise<Answer> {
    return this.answer(this.send(op, body));
  }

  /** A request that must succeed: its body. */
  async ok(op: string, body: unknown): Promise<Record<string, unknown>> {
    const a = await this.request(op, body);
    if (!a.body) throw new Error(`${op} refused: ${JSON.stringify(a.error)}`);
    return a.body;
  }

  /** The (first unclaimed) answer with this id. */
  async answer(id: number | null, timeoutMs = ANSWER_MS): Promise<Answer> {
    await this.until(() => (this.answers.get(id)?.length ?? 0) > 0, timeoutMs, `answer ${id}`);
    return (this.answers.get(id) as Answer[]).shift() as Answer;
  }

  async until(done: () => boolean, timeoutMs = ANSWER_MS, what = "condition"): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (this.closed && !done())
        throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async waitClosed(timeoutMs = ANSWER_MS): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error("socket did not close");
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.closed;
  }

  close(): void {
    // A mark still on its way after the close finds a socket that can no longer send its ack.
    this.ackMarks = false;
    try {
      this.ws.close(1000, "done");
    } catch {}
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
