/**
 * An experiment, not the product: the subset of `fetch` the HTTP transport
 * uses (POST a body, read status, headers and the bytes), over `node:http`
 * with a keep-alive agent. In a new Node 20 process the first global `fetch`
 * pays for loading undici (~70–120 ms on the dev machine, against ~20 ms for
 * a first node:http request), which is most of a one-round-trip restore.
 * bench:restore --experiment runs an extra arm with it to show the gain.
 */
import http from "node:http";

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

interface MinimalResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  arrayBuffer(): Promise<ArrayBuffer>;
}

export const nodeHttpFetch = ((input: string | URL, init?: RequestInit): Promise<MinimalResponse> => {
  const url = new URL(String(input));
  const body = init?.body instanceof Uint8Array ? init.body : undefined;
  // The transport passes a plain object; touching the global Headers class would load undici.
  const headers: Record<string, string> = { ...((init?.headers as Record<string, string> | undefined) ?? {}) };
  if (body) headers["content-length"] = String(body.byteLength);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: init?.method ?? "GET",
        headers,
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const bytes = Buffer.concat(chunks);
          const status = res.statusCode ?? 0;
          resolve({
            ok: status >= 200 && status < 300,
            status,
            headers: { get: (name) => (res.headers[name.toLowerCase()] as string | undefined) ?? null },
            arrayBuffer: async () =>
              bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
          });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}) as unknown as typeof fetch;

/** Lets the process exit without waiting for idle keep-alive sockets. */
export function closeNodeHttp(): void {
  agent.destroy();
}
