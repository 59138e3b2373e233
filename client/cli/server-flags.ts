/**
 * Flags of the commands that talk to a workspace without syncing a
 * directory (log, restore, gc, workspace, open): the common options
 * (host-options.ts COMMON_OPTIONS), as for push and pull.
 */
import type { Command } from "commander";
import { isErrorCode, ProtocolError } from "../../protocol/errors.ts";
import { toHex } from "../../protocol/hash.ts";
import type { StatsAnswer } from "../../protocol/stats.ts";
import type { Endpoint } from "../transport/transport.ts";
import { CliError } from "./errors.ts";
import { COMMON_OPTION_LIST } from "./host-options.ts";

export function serverOptions(command: Command): Command {
  for (const o of COMMON_OPTION_LIST) command.option(o.flags, o.description);
  return command;
}

/**
 * Calls an admin, stats or read-token route (JSON, not CBOR): the answer,
 * or the error every command gives for the same failure: the server's code,
 * `unavailable: cannot reach <url>: <cause>` as push says it, `not_ferry`
 * for an answer that is not ferry's.
 */
export async function callJson(endpoint: Endpoint, method: string, route: string): Promise<Record<string, unknown>> {
  const base = `${endpoint.url.replace(/\/+$/, "")}/v1/workspaces/${encodeURIComponent(endpoint.workspace)}`;
  let res: Response;
  try {
    res = await fetch(`${base}${route}`, { method, headers: { authorization: `Bearer ${endpoint.token}` } });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new ProtocolError(
      "unavailable",
      `cannot reach ${endpoint.url}: ${cause?.message ?? cause?.code ?? (e as Error).message}`,
    );
  }
  const text = await res.text();
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON: not ferry's answer, said just below.
  }
  if (body === null) throw new CliError("not_ferry", notFerryMessage(endpoint.url, res));
  if (!res.ok) {
    const error = (body.error ?? {}) as { code?: unknown; message?: string };
    if (!isErrorCode(error.code)) throw new CliError("not_ferry", notFerryMessage(endpoint.url, res));
    throw new ProtocolError(error.code, error.message ?? `HTTP ${res.status}`);
  }
  return body;
}

function notFerryMessage(url: string, res: Response): string {
  const type = res.headers.get("content-type")?.split(";")[0];
  return `${url} is not a ferry server (it answered HTTP ${res.status}${type ? ` with ${type}` : ""})`;
}

/**
 * The workspace's stats, or `no_such_workspace` for one never created
 * (nothing pushed, no host ever synced it, or deleted): a read or admin
 * command on a mistyped name says so instead of showing an empty workspace.
 */
export async function statsOfExisting(endpoint: Endpoint): Promise<StatsAnswer> {
  const stats = (await callJson(endpoint, "GET", "/stats")) as unknown as StatsAnswer;
  if (stats.rev === 0 && stats.hostCount === 0) {
    throw new CliError(
      "no_such_workspace",
      `there is no workspace '${endpoint.workspace}' at ${endpoint.url}: nothing was ever pushed to it (check its name)`,
    );
  }
  return stats;
}

/** JSON.stringify that writes byte strings (host ids) as hex. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (v instanceof Uint8Array ? toHex(v) : v));
}
