/**
 * Flags of the commands that talk to a workspace without syncing a
 * directory (log, restore, gc, workspace): where the server is and how to
 * authenticate, as for push and pull.
 */
import type { Command } from "commander";
import { toHex } from "../../protocol/hash.ts";
import type { Endpoint } from "../transport/transport.ts";

export function serverOptions(command: Command): Command {
  return command
    .option("--url <url>", "server URL (env FERRY_URL, default http://127.0.0.1:8787)")
    .option("-w, --workspace <name>", "workspace name (env FERRY_WORKSPACE)")
    .option("--token <token>", "bearer token (env FERRY_TOKEN; else minted from FERRY_SECRET or the dev secret)")
    .option("--json", "print the result as one JSON object");
}

/** Calls an admin or stats route (JSON, not CBOR): the answer, or a thrown CliError-like error with the server's code. */
export async function callJson(endpoint: Endpoint, method: string, route: string): Promise<Record<string, unknown>> {
  const base = `${endpoint.url.replace(/\/+$/, "")}/v1/workspaces/${encodeURIComponent(endpoint.workspace)}`;
  const res = await fetch(`${base}${route}`, { method, headers: { authorization: `Bearer ${endpoint.token}` } });
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) {
    const error = (body.error ?? {}) as { code?: string; message?: string };
    throw Object.assign(new Error(error.message ?? `HTTP ${res.status}`), { code: error.code ?? "internal" });
  }
  return body;
}

/** JSON.stringify that writes byte strings (host ids) as hex. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (v instanceof Uint8Array ? toHex(v) : v));
}
