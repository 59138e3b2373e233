/**
 * The WebSocket transport's handshake (ws-transport.ts): the socket URL for
 * an endpoint, and a refused upgrade (the server answered with an HTTP
 * error instead of 101) read back into the server's error code.
 */
import type { IncomingMessage } from "node:http";
import { codeOfStatus, decodeWireError, ProtocolError } from "../../protocol/errors.ts";
import type { Endpoint } from "./transport.ts";

/** `http://host:8787` → `ws://host:8787/v1/workspaces/{ws}/sync` (https → wss). */
export function socketUrl(endpoint: Endpoint): string {
  const base = endpoint.url.replace(/\/+$/, "").replace(/^http(s?):/i, "ws$1:");
  return `${base}/v1/workspaces/${encodeURIComponent(endpoint.workspace)}/sync`;
}

/** The error a refused upgrade carries (its JSON body), or one named by its status. */
export async function refusedUpgrade(res: IncomingMessage): Promise<ProtocolError> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    const error = decodeWireError(JSON.parse(text));
    if (error) return error;
  } catch {
    // Not JSON: a proxy's page, say.
  }
  const status = res.statusCode ?? 0;
  return new ProtocolError(codeOfStatus(status), `WebSocket upgrade refused: HTTP ${status}`, { status });
}
