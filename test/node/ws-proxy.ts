/**
 * A TCP proxy in front of the test server that can drop its connections on
 * demand, so WebSocket tests see real disconnects: all at once (`cut`), or
 * at the next chunk one way (`cutOnNext`), before or after a request reaches
 * the server.
 */
import { createServer, type Server, Socket } from "node:net";

export class CuttingProxy {
  private readonly pairs = new Set<[Socket, Socket]>();
  private cutNext: "request" | "answer" | null = null;
  /** Connections accepted so far: one per socket the client opened. */
  connections = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(upstream: string): Promise<CuttingProxy> {
    const target = new URL(upstream);
    let proxy: CuttingProxy | null = null;
    const server = createServer((client) => proxy?.accept(client, target));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("proxy has no port");
    proxy = new CuttingProxy(server, `http://127.0.0.1:${address.port}`);
    return proxy;
  }

  /** Drops every open connection now. */
  cut(): void {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    this.pairs.clear();
  }

  /**
   * Drops the connections at the next chunk going that way, without passing
   * it on: `request` loses a frame before the server sees it, `answer` loses
   * the server's answer after it acted on the request.
   */
  cutOnNext(direction: "request" | "answer"): void {
    this.cutNext = direction;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: URL): void {
    this.connections++;
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const forward = (from: Socket, to: Socket, direction: "request" | "answer") => {
      from.on("data", (chunk: Buffer) => {
        if (this.cutNext === direction) {
          this.cutNext = null;
          this.cut();
          return;
        }
        to.write(chunk);
      });
      from.on("close", () => {
        to.destroy();
        this.pairs.delete(pair);
      });
      from.on("error", () => {});
    };
    forward(client, upstream, "request");
    forward(upstream, client, "answer");
    upstream.connect(Number(target.port), target.hostname);
  }
}
