/**
 * The V8 heap of the server's Worker isolate (the Worker and its Durable
 * Objects), read through the DevTools inspector the server exposes (`ferry serve --inspector-port`)
 * (`Runtime.getHeapUsage`). A Durable Object's 128 MB limit is on this heap,
 * not on the workerd process, whose resident memory also holds SQLite page
 * caches and native buffers; bench:push reports both.
 */
import WebSocket from "ws";
import type { BenchServer } from "./server.ts";

export interface HeapPeak {
  /** Largest heap in use seen, MiB. */
  readonly usedMiB: number;
  /** Largest heap size the isolate had reserved, MiB. */
  readonly totalMiB: number;
}

export class IsolateHeap {
  private nextId = 1;
  private readonly waiting = new Map<number, (result: unknown) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => {
      const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown };
      if (msg.id !== undefined) this.waiting.get(msg.id)?.(msg.result);
    });
  }

  /** Null when the server has no inspector to talk to (the figure is then left out). */
  static async connect(server: BenchServer): Promise<IsolateHeap | null> {
    try {
      const res = await fetch(`http://127.0.0.1:${server.inspectorPort}/json/list`);
      // ferry serve names its Worker `ferry`; wrangler dev's Miniflare lists its own workers too, ours as `core:user:<name>`.
      const targets = (await res.json()) as { id?: string; webSocketDebuggerUrl?: string }[];
      const ours = targets.find((t) => t.id === "ferry" || t.id?.startsWith("core:user:"));
      const url = (ours ?? targets[0])?.webSocketDebuggerUrl;
      if (!url) return null;
      const socket = new WebSocket(url);
      await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
      return new IsolateHeap(socket);
    } catch {
      return null;
    }
  }

  async usage(): Promise<{ usedMiB: number; totalMiB: number }> {
    const result = (await this.call("Runtime.getHeapUsage")) as { usedSize: number; totalSize: number };
    return { usedMiB: result.usedSize / 2 ** 20, totalMiB: result.totalSize / 2 ** 20 };
  }

  private async call(method: string): Promise<unknown> {
    const id = this.nextId++;
    try {
      return await new Promise<unknown>((resolve) => {
        this.waiting.set(id, resolve);
        this.socket.send(JSON.stringify({ id, method, params: {} }));
      });
    } finally {
      this.waiting.delete(id);
    }
  }

  /** Polls the heap every `everyMs` until the returned function is called; it resolves to the peaks seen. */
  watch(everyMs = 250): () => Promise<HeapPeak> {
    let used = 0;
    let total = 0;
    let busy = false;
    const take = async () => {
      if (busy) return;
      busy = true;
      try {
        const u = await this.usage();
        used = Math.max(used, u.usedMiB);
        total = Math.max(total, u.totalMiB);
      } finally {
        busy = false;
      }
    };
    void take();
    const timer = setInterval(() => void take(), everyMs);
    return async () => {
      clearInterval(timer);
      await take();
      return { usedMiB: used, totalMiB: total };
    };
  }

  close(): void {
    this.socket.close();
  }
}
