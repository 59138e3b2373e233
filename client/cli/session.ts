/**
 * Opening a host for one CLI command: the root directory, its lock and
 * binding (binding.ts), its store (`<dir>/.ferry/` or memory), the transport
 * (HTTP, or WebSocket) and the engine, with one Output for what it prints.
 */
import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { HelloResponse } from "../../protocol/hello.ts";
import { RootBinding } from "../binding.ts";
import { SyncEngine } from "../engine/sync.ts";
import { HttpTransport } from "../http-transport.ts";
import { VCS_DIRS } from "../ignore-rules.ts";
import { openStore, STORE_DIR } from "../store/sqlite-store.ts";
import type { HostStore } from "../store/store.ts";
import type { Endpoint, Transport } from "../transport.ts";
import { WsTransport } from "../ws-transport.ts";
import { type EndpointFlags, freshTokens, mintsOwnToken, resolveEndpoint } from "./endpoint.ts";
import { CliError } from "./errors.ts";
import { Output, type OutputFlags } from "./output.ts";

export interface HostFlags extends EndpointFlags, OutputFlags {
  readonly memory?: boolean;
  readonly ignore?: string[];
  readonly ignoreVcs?: boolean;
  /** `http` (one request per operation) or `ws` (one socket; `sync --watch` uses it for pokes). */
  readonly transport?: "http" | "ws";
  /** Sync with this workspace although the directory is bound to another. */
  readonly rebind?: boolean;
  /** Pull a workspace nothing was ever pushed to (it starts empty). */
  readonly create?: boolean;
  readonly dryRun?: boolean;
}

/** What the command does: `pull` must find the workspace; `status` and dry runs record nothing. */
export type HostVerb = "push" | "pull" | "sync" | "status";

export interface CliHost {
  readonly engine: SyncEngine;
  readonly endpoint: Endpoint;
  readonly out: Output;
  close(): Promise<void>;
}

/** Opens the host at `dir` (made when missing for pull and sync). */
export async function openCliHost(dir: string, flags: HostFlags, verb: HostVerb): Promise<CliHost> {
  const endpoint = resolveEndpoint(flags);
  const records = verb !== "status" && !flags.dryRun;
  const root = resolveRoot(dir, records && (verb === "pull" || verb === "sync"));
  // A look at a directory never synced leaves no store behind.
  const untouched = !records && !existsSync(join(root, STORE_DIR));
  const binding = untouched ? RootBinding.none() : RootBinding.open(root);
  let store: HostStore | null = null;
  try {
    binding.check(root, endpoint, flags.rebind === true);
    store = openStore(flags.memory || untouched ? "memory" : "disk", root);
  } catch (e) {
    binding.close();
    throw e;
  }
  const onHello = (hello: HelloResponse) => {
    if (binding.matches(endpoint)) return;
    if (verb === "pull" && hello.rev === 0 && !flags.create) {
      throw new CliError(
        "no_such_workspace",
        `nothing was ever pushed to workspace '${endpoint.workspace}' at ${endpoint.url}: ` +
          "check its name, or pass --create to start it empty",
      );
    }
    if (records) binding.record(endpoint);
  };
  // A token the CLI minted itself (none was given) is minted again before it expires, so a `sync --watch` outlives it.
  const tokens = mintsOwnToken(flags) ? { token: freshTokens(endpoint.workspace) } : {};
  const transport: Transport =
    flags.transport === "ws" ? new WsTransport(endpoint, tokens) : new HttpTransport(endpoint, tokens);
  const out = Output.open(flags);
  const engine = new SyncEngine({
    root,
    store,
    transport,
    ignorePatterns: [...(flags.ignoreVcs ? VCS_DIRS : []), ...(flags.ignore ?? [])],
    onHello,
    // Smaller packs than the server's limit: for tests that interrupt a push between packs.
    ...(process.env.FERRY_PACK_ENTRIES ? { maxPackEntries: Number(process.env.FERRY_PACK_ENTRIES) } : {}),
    ...(out.bars ? { progress: out.bars } : {}),
  });
  let closed = false;
  const opened = store;
  return {
    engine,
    endpoint,
    out,
    async close() {
      if (closed) return;
      closed = true;
      out.stop();
      opened.close();
      binding.close();
      await transport.close();
    },
  };
}

function resolveRoot(dir: string, create: boolean): string {
  const abs = resolve(dir);
  if (create) mkdirSync(abs, { recursive: true });
  let isDir: boolean | null = null;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {}
  if (isDir === null) throw new CliError("not_a_directory", `${dir} does not exist`);
  if (!isDir) throw new CliError("not_a_directory", `${dir} is not a directory`);
  return realpathSync(abs);
}
