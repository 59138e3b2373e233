/**
 * A TCP proxy in front of the test server that can drop its connections on
 * demand, so WebSocket tests see real disconnects: all at once (`cut`), or
 * at the next chunk one way (`cutOnNext`), before or after a request reaches
 * the server. Its upstream can change (`retarget`), or be none: a connection
 * is then reset at once, as a stopped server's port would refuse it.
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
    private target: URL | null,
  ) {}

  static async start(upstream: string | null): Promise<CuttingProxy> {
    let proxy: CuttingProxy | null = null;
    const server = createServer((client) => proxy?.accept(client));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("proxy has no port");
    proxy = new CuttingProxy(server, `http://127.0.0.1:${address.port}`, upstream === null ? null : new URL(upstream));
    return proxy;
  }

  /** Where new connections go from now on (null: none, each is reset); open ones stay as they are. */
  retarget(upstream: string | null): void {
    this.target = upstream === null ? null : new URL(upstream);
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

  private accept(client: Socket): void {
    this.connections++;
    const target = this.target;
    if (target === null) {
      client.resetAndDestroy();
      return;
    }
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
