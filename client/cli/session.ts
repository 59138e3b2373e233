/**
 * Opening a host for one CLI command: the root directory, its lock and
 * binding (client/store/binding.ts), its store (`<dir>/.ferry/` or memory), the transport
 * (HTTP, or WebSocket) and the engine, with one Output for what it prints.
 */
import { existsSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { isValidLabel } from "../../protocol/label.ts";
import { STORE_DIR } from "../store/sqlite-store.ts";
import type { Endpoint } from "../transport/transport.ts";
import { openWorkspace, type Workspace } from "../workspace.ts";
import { type EndpointFlags, freshTokens, mintsOwnToken, resolveEndpoint } from "./endpoint.ts";
import { CliError } from "./errors.ts";
import { Output, type OutputFlags } from "./output.ts";

export interface HostFlags extends EndpointFlags, OutputFlags {
  readonly memory?: boolean;
  readonly ignore?: string[];
  readonly ignoreVcs?: boolean;
  /** `http` (one request per operation) or `ws` (one socket; `sync --watch` uses it for pokes). */
  readonly transport?: "http" | "ws";
  /** This host's readable name (else FERRY_LABEL, else the hostname). */
  readonly label?: string;
  /** Sync with this workspace although the directory is bound to another. */
  readonly rebind?: boolean;
  /** Pull a workspace nothing was ever pushed to (it starts empty). */
  readonly create?: boolean;
  readonly dryRun?: boolean;
}

/** What the command does: pull and sync make a missing directory; status and dry runs leave a new one untouched. */
export type HostVerb = "push" | "pull" | "sync" | "status";

export interface CliHost {
  readonly workspace: Workspace;
  readonly endpoint: Endpoint;
  readonly out: Output;
  close(): Promise<void>;
}

/** Opens the host at `dir` through the library's openWorkspace, with one Output for what the command prints. */
export async function openCliHost(dir: string, flags: HostFlags, verb: HostVerb): Promise<CliHost> {
  const endpoint = resolveEndpoint(flags);
  const looks = verb === "status" || flags.dryRun === true;
  const root = resolveRoot(dir, !looks && (verb === "pull" || verb === "sync"));
  // A look at a directory never synced leaves no store behind.
  const untouched = looks && !existsSync(join(root, STORE_DIR));
  const label = flags.label ?? process.env.FERRY_LABEL;
  if (label !== undefined && !isValidLabel(label)) {
    throw new CliError(
      "usage",
      `--label '${label}': expected 1 to 63 of A-Z a-z 0-9 . _ - (starting with a letter or digit)`,
    );
  }
  const out = Output.open(flags);
  let workspace: Workspace;
  try {
    workspace = openWorkspace(root, {
      url: endpoint.url,
      workspace: endpoint.workspace,
      // A token the CLI minted itself (none was given) is minted again before it expires, so a `sync --watch` outlives it.
      token: mintsOwnToken(flags) ? freshTokens(endpoint.workspace) : endpoint.token,
      transport: flags.transport ?? "http",
      store: flags.memory || untouched ? "memory" : "disk",
      lock: !untouched,
      ignore: flags.ignore ?? [],
      ignoreVcs: flags.ignoreVcs === true,
      rebind: flags.rebind === true,
      ...(label !== undefined ? { label } : {}),
      // Smaller packs than the server's limit: for tests that interrupt a push between packs.
      ...(process.env.FERRY_PACK_ENTRIES ? { maxPackEntries: Number(process.env.FERRY_PACK_ENTRIES) } : {}),
      ...(out.bars ? { progress: out.bars } : {}),
    });
  } catch (e) {
    out.stop();
    throw e;
  }
  return {
    workspace,
    endpoint,
    out,
    async close() {
      out.stop();
      await workspace.close();
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
