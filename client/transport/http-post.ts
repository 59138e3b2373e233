/**
 * One HTTP POST over `node:http` / `node:https` with a keep-alive agent per
 * transport. The HTTP transport uses it instead of the global `fetch`: in a
 * new Node 20 process the first `fetch` loads undici (tens of milliseconds,
 * most of a one-round-trip restore) and keeps the process alive ~185 ms after
 * its last request (BENCHMARKS.md, "Where the time goes").
 */
import http from "node:http";
import https from "node:https";

export interface PostAnswer {
  readonly status: number;
  header(name: string): string | null;
  readonly bytes: Uint8Array;
}

/** A request body as buffers sent in order (protocol/ops.ts encodeRequestBody), and their total length. */
export interface RequestBody {
  readonly parts: readonly Uint8Array[];
  readonly byteLength: number;
}

export class HttpPoster {
  private readonly agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets: 8 }),
    "https:": new https.Agent({ keepAlive: true, maxSockets: 8 }),
  };

  post(url: string, headers: Record<string, string>, body: RequestBody, timeoutMs: number): Promise<PostAnswer> {
    const target = new URL(url);
    const protocol = target.protocol === "https:" ? "https:" : "http:";
    const request = protocol === "https:" ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = request(
        target,
        {
          method: "POST",
          headers: { ...headers, "content-length": String(body.byteLength) },
          agent: this.agents[protocol],
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("aborted", () => reject(new Error("response aborted")));
          res.on("end", () => {
            const bytes = Buffer.concat(chunks);
            resolve({
              status: res.statusCode ?? 0,
              header: (name) => {
                const v = res.headers[name.toLowerCase()];
                return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
              },
              bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
            });
          });
        },
      );
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on("error", reject);
      // Corked, the parts go out in one writev rather than a write each.
      req.cork();
      for (const part of body.parts) req.write(part);
      req.end();
    });
  }

  /** Closes idle keep-alive sockets so the process can exit at once. */
  close(): void {
    this.agents["http:"].destroy();
    this.agents["https:"].destroy();
  }
}
