/**
 * Opening a host for one CLI command: the root directory, its store
 * (`<dir>/.ferry/` or memory), the transport (HTTP, or WebSocket) and the engine; and
 * printing what a command did (summary line, or JSON with --json).
 */
import { mkdirSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { SyncReport } from "../engine/report.ts";
import { SyncEngine } from "../engine/sync.ts";
import { HttpTransport } from "../http-transport.ts";
import { openStore } from "../store/sqlite-store.ts";
import type { HostStore } from "../store/store.ts";
import type { Transport } from "../transport.ts";
import { WsTransport } from "../ws-transport.ts";
import { type EndpointFlags, freshTokens, mintsOwnToken, resolveEndpoint } from "./endpoint.ts";
import { CliError, EXIT } from "./errors.ts";
import { summaryLine } from "./format.ts";
import { terminalProgress } from "./progress.ts";

export interface HostFlags extends EndpointFlags {
  readonly memory?: boolean;
  readonly json?: boolean;
  readonly progress?: boolean;
  readonly ignore?: string[];
  /** `http` (one request per operation) or `ws` (one socket; `sync --watch` uses it for pokes). */
  readonly transport?: "http" | "ws";
}

export interface CliHost {
  readonly engine: SyncEngine;
  readonly workspace: string;
  close(): Promise<void>;
}

/** Opens the host at `dir`; `create` makes the directory when missing (pull, sync). */
export async function openCliHost(dir: string, flags: HostFlags, create: boolean): Promise<CliHost> {
  const endpoint = resolveEndpoint(flags);
  const root = resolveRoot(dir, create);
  const store: HostStore = openStore(flags.memory ? "memory" : "disk", root);
  // A token the CLI minted itself (none was given) is minted again before it expires, so a `sync --watch` outlives it.
  const tokens = mintsOwnToken(flags) ? { token: freshTokens(endpoint.workspace) } : {};
  const transport: Transport =
    flags.transport === "ws" ? new WsTransport(endpoint, tokens) : new HttpTransport(endpoint, tokens);
  const bars = flags.json || flags.progress === false || !process.stderr.isTTY ? null : await terminalProgress();
  const engine = new SyncEngine({
    root,
    store,
    transport,
    ignorePatterns: flags.ignore ?? [],
    // Smaller packs than the server's limit: for tests that interrupt a push between packs.
    ...(process.env.FERRY_PACK_ENTRIES ? { maxPackEntries: Number(process.env.FERRY_PACK_ENTRIES) } : {}),
    ...(bars ? { progress: bars } : {}),
  });
  let closed = false;
  return {
    engine,
    workspace: endpoint.workspace,
    async close() {
      if (closed) return;
      closed = true;
      bars?.stop();
      store.close();
      await transport.close();
    },
  };
}

function resolveRoot(dir: string, create: boolean): string {
  const abs = resolve(dir);
  if (create) mkdirSync(abs, { recursive: true });
  let isDir = false;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {}
  if (!isDir) throw new CliError("not_a_directory", `${dir} is not a directory`);
  return realpathSync(abs);
}

/** Prints a sync's outcome and returns the exit status. */
export function printReport(verb: string, workspace: string, report: SyncReport, json: boolean): number {
  if (json) process.stdout.write(`${JSON.stringify({ workspace, ...report })}\n`);
  else {
    process.stdout.write(`ferry ${summaryLine(verb, report)}\n`);
    for (const c of report.conflicts) process.stdout.write(`ferry: conflict: kept the local ${c.path} as ${c.copy}\n`);
  }
  for (const s of report.skipped) process.stderr.write(`ferry: skipped: ${s.path}: ${s.reason}\n`);
  for (const r of report.refused) process.stderr.write(`ferry: refused: ${r.path}: ${r.reason}\n`);
  return report.refused.length > 0 ? EXIT.refused : EXIT.ok;
}
