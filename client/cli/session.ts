/**
 * Opening a host for one CLI command: the root directory, its lock and
 * binding (client/store/binding.ts), its store (`<dir>/.ferry/` or memory), the transport
 * (HTTP, or WebSocket) and the engine, with one Output for what it prints.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ServerClock } from "../common/server-clock.ts";
import { DEFAULT_MASS_DELETE, type MassDeleteRule, parseMassDeleteRule } from "../engine/mass-delete.ts";
import { SILENT } from "../engine/report.ts";
import { RootBinding } from "../store/binding.ts";
import { type EnclosingRoot, findRoot } from "../store/find-root.ts";
import { STORE_DIR } from "../store/sqlite-store.ts";
import type { Endpoint } from "../transport/transport.ts";
import { removeIfEmpty } from "../workspace/first-use.ts";
import { openWorkspace, type Workspace } from "../workspace/workspace.ts";
import { freshTokens, mintsOwnToken } from "./endpoint.ts";
import { CliError } from "./errors.ts";
import { type FolderFlags, resolveFolderEndpoint } from "./folder-endpoint.ts";
import { optimizingLargeScans } from "./large-scan.ts";
import { Output, type OutputFlags } from "./output.ts";

export interface HostFlags extends FolderFlags, OutputFlags {
  readonly memory?: boolean;
  readonly ignore?: string[];
  readonly ignoreVcs?: boolean;
  /** `http` (one request per operation) or `ws` (one socket; `sync --watch` uses it for pokes). */
  readonly transport?: "http" | "ws";
  /** Pull a workspace nothing was ever pushed to (it starts empty). */
  readonly create?: boolean;
  readonly dryRun?: boolean;
  /** Push a deletion of most of the tree (engine/mass-delete.ts). */
  readonly allowMassDelete?: boolean;
  /** After the push, upload again what the server lost (engine/heal.ts). */
  readonly heal?: boolean;
  /** Start again a workspace deleted since the directory synced it (WorkspaceOptions.recreate). */
  readonly recreate?: boolean;
}

/** What the command does: pull and sync make a missing directory; status and dry runs leave a new one untouched. */
export type HostVerb = "push" | "pull" | "sync" | "status";

export interface CliHost {
  readonly workspace: Workspace;
  readonly endpoint: Endpoint;
  /** The label it asked for (undefined: the hostname's); what a served command must ask for too. */
  readonly label: string | undefined;
  readonly out: Output;
  /** `failed`: the command failed, and a directory it made (pull, sync) goes again if still empty. */
  close(options?: { readonly failed?: boolean }): Promise<void>;
}

/** Opens the host at `dir` through the library's openWorkspace, with one Output for what the command prints. */
export async function openCliHost(dir: string, flags: HostFlags, verb: HostVerb): Promise<CliHost> {
  const looks = verb === "status" || flags.dryRun === true;
  const makes = verb === "pull" || verb === "sync";
  // A path inside a synced folder works on the whole folder, as git works on the repository a path is in.
  const enclosing = findRoot(dir);
  if (enclosing !== null && enclosing.sub !== "" && !existsSync(resolve(dir))) {
    // A typo, most likely; and made, it would be a second root inside the first.
    throw new CliError(
      "not_a_directory",
      `${dir} does not exist (it would be inside the synced folder ${enclosing.root})`,
    );
  }
  // A dry run of a pull into a directory not made yet looks from an empty stand-in (removed at close), making nothing.
  const standIn =
    enclosing === null && looks && makes && !existsSync(resolve(dir))
      ? mkdtempSync(join(tmpdir(), "ferry-dry-run-"))
      : null;
  const made = enclosing === null && !looks && makes && !existsSync(resolve(dir));
  const root = standIn ?? enclosing?.root ?? resolveRoot(dir, !looks && makes);
  // What this command made goes again when it fails: a stand-in always, a directory it made while still empty.
  const removeStandIn = (failed = true) => {
    if (standIn) rmSync(standIn, { recursive: true, force: true });
    if (made && failed) removeIfEmpty(root);
  };
  // A look at a directory never synced leaves no store behind.
  const untouched = looks && !existsSync(join(root, STORE_DIR));
  let resolved: ReturnType<typeof resolveFolderEndpoint>;
  try {
    resolved = resolveFolderEndpoint(flags, untouched ? null : RootBinding.read(root));
  } catch (e) {
    removeStandIn();
    throw e;
  }
  const { endpoint, label } = resolved;
  const out = Output.open(flags);
  noteEnclosingRoot(out, dir, enclosing, verb);
  // A token the CLI mints itself expires by the server's clock, which this host's may be an hour off.
  const clock = new ServerClock();
  let workspace: Workspace;
  try {
    workspace = openWorkspace(root, {
      url: endpoint.url,
      workspace: endpoint.workspace,
      // A token the CLI minted itself (none was given) is minted again before it expires, so a `sync --watch` outlives it.
      ...(mintsOwnToken(flags)
        ? { token: freshTokens(endpoint.workspace, clock), serverClock: clock }
        : { token: endpoint.token }),
      transport: flags.transport ?? "http",
      // A look that rebinds sees what the rebound sync would, from a fresh store, and drops no store (workspace.ts).
      store: flags.memory || untouched || (looks && flags.rebind) ? "memory" : "disk",
      lock: !untouched,
      ignore: flags.ignore ?? [],
      ignoreVcs: flags.ignoreVcs === true,
      rebind: flags.rebind === true,
      massDelete: massDeleteRule(process.env),
      recreate: flags.recreate === true,
      ...(label !== undefined ? { label } : {}),
      // Smaller packs than the server's limit: for tests that interrupt a push between packs.
      ...(process.env.FERRY_PACK_ENTRIES ? { maxPackEntries: Number(process.env.FERRY_PACK_ENTRIES) } : {}),
      progress: optimizingLargeScans(out.bars ?? SILENT),
    });
  } catch (e) {
    out.stop();
    removeStandIn();
    throw e;
  }
  return {
    workspace,
    endpoint,
    label,
    out,
    async close(o = {}) {
      out.stop();
      // The command ends next (cli.ts exits once nothing is left to run).
      await workspace.close({ atExit: true });
      removeStandIn(o.failed === true);
    },
  };
}

/**
 * Says that a path inside a synced folder stands for the whole folder
 * (README "A synced folder has one root"): for this process's command and
 * for one a watch serves (resident-server.ts).
 */
export function noteEnclosingRoot(out: Output, dir: string, enclosing: EnclosingRoot | null, verb: HostVerb): void {
  if (enclosing === null || enclosing.sub === "") return;
  out.warn(`ferry: ${dir} is inside the synced folder ${enclosing.root}: ${ALL_OF_IT[verb]}`);
}

const ALL_OF_IT = {
  push: "pushing all of it",
  pull: "pulling into all of it",
  sync: "syncing all of it",
  status: "the status of all of it",
} as const;

/** FERRY_MASS_DELETE (engine/mass-delete.ts parseMassDeleteRule), else the default rule. */
function massDeleteRule(env: NodeJS.ProcessEnv): MassDeleteRule | false {
  if (!env.FERRY_MASS_DELETE) return DEFAULT_MASS_DELETE;
  try {
    return parseMassDeleteRule(env.FERRY_MASS_DELETE) ?? false;
  } catch (e) {
    throw new CliError("usage", (e as Error).message);
  }
}

function resolveRoot(dir: string, create: boolean): string {
  const abs = resolve(dir);
  if (create) mkdirSync(abs, { recursive: true });
  let isDir: boolean | null = null;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    // Not there (or not reachable): said just below as not_a_directory.
  }
  if (isDir === null) throw new CliError("not_a_directory", `${dir} does not exist`);
  if (!isDir) throw new CliError("not_a_directory", `${dir} is not a directory`);
  return realpathSync(abs);
}
