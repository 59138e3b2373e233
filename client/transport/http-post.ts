/**
 * One HTTP POST over `node:http` / `node:https` with a keep-alive agent per
 * transport. The HTTP transport uses it instead of the global `fetch`: in a
 * new Node 20 process the first `fetch` loads undici (tens of milliseconds,
 * most of a one-round-trip restore) and keeps the process alive ~185 ms after
 * its last request (BENCHMARKS.md, "Where the time goes").
 */
import http from "node:http";
import { concatBytes } from "../../protocol/cbor-parts.ts";

export interface PostAnswer {
  readonly status: number;
  header(name: string): string | null;
  /** The body as the buffers it arrived in (an objects/get answer is read from these without joining them). */
  readonly parts: readonly Uint8Array[];
  readonly byteLength: number;
  /** The body in one buffer, joined on first use. */
  bytes(): Uint8Array;
}

/** A PostAnswer from its body's buffers. */
export function postAnswer(
  status: number,
  header: (name: string) => string | null,
  parts: readonly Uint8Array[],
): PostAnswer {
  let joined: Uint8Array | null = null;
  return {
    status,
    header,
    parts,
    byteLength: parts.reduce((n, p) => n + p.byteLength, 0),
    bytes: () => {
      joined ??= concatBytes(parts);
      return joined;
    },
  };
}

/** A request body as buffers sent in order (protocol/ops.ts encodeRequestBody), and their total length. */
export interface RequestBody {
  readonly parts: readonly Uint8Array[];
  readonly byteLength: number;
}

/** A client module and its keep-alive agent. */
interface Client {
  readonly request: typeof http.request;
  readonly agent: http.Agent;
}

export class HttpPoster {
  private readonly plain: Client = { request: http.request, agent: new http.Agent({ keepAlive: true, maxSockets: 8 }) };
  /**
   * node:https, loaded on the first https:// request: with TLS under it, it
   * cost every command 10-15 ms of CPU at start (BENCHMARKS.md section 10),
   * and a local server is plain HTTP.
   */
  private secure: Promise<Client> | null = null;
  private secureAgent: http.Agent | null = null;
  /** Requests not yet ended: close() cancels them (an upload of a push stopped by Ctrl-C, which no one awaits). */
  private readonly inFlight = new Set<http.ClientRequest>();

  post(url: string, headers: Record<string, string>, body: RequestBody, timeoutMs: number): Promise<PostAnswer> {
    const target = new URL(url);
    if (target.protocol !== "https:") return this.send(this.plain, target, headers, body, timeoutMs);
    this.secure ??= import("node:https").then(({ default: https }) => {
      const agent = new https.Agent({ keepAlive: true, maxSockets: 8 });
      this.secureAgent = agent;
      return { request: https.request, agent };
    });
    return this.secure.then((client) => this.send(client, target, headers, body, timeoutMs));
  }

  private send(
    { request, agent }: Client,
    target: URL,
    headers: Record<string, string>,
    body: RequestBody,
    timeoutMs: number,
  ): Promise<PostAnswer> {
    return new Promise((resolve, reject) => {
      const req = request(
        target,
        {
          method: "POST",
          headers: { ...headers, "content-length": String(body.byteLength) },
          agent,
        },
        (res) => {
          // Plain Uint8Array views: a Buffer's subarrays are Buffers, which decoded values must not be.
          const chunks: Uint8Array[] = [];
          res.on("data", (c: Buffer) => chunks.push(new Uint8Array(c.buffer, c.byteOffset, c.byteLength)));
          res.on("error", reject);
          res.on("aborted", () => reject(new Error("response aborted")));
          res.on("end", () => {
            // Not joined here: an objects/get answer is read from its parts (http-transport.ts).
            const header = (name: string) => {
              const v = res.headers[name.toLowerCase()];
              return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
            };
            resolve(postAnswer(res.statusCode ?? 0, header, chunks));
          });
        },
      );
      this.inFlight.add(req);
      req.once("close", () => this.inFlight.delete(req));
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on("error", reject);
      // Corked, the parts go out in one writev rather than a write each.
      req.cork();
      for (const part of body.parts) req.write(part);
      req.end();
    });
  }

  /**
   * Closes idle keep-alive sockets, and cancels requests still in flight
   * (whose agent's destroy() leaves them running), so the process can exit at once.
   */
  close(): void {
    for (const req of this.inFlight) req.destroy(new Error("the transport was closed"));
    this.plain.agent.destroy();
    this.secureAgent?.destroy();
  }
}
