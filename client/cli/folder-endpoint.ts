/**
 * Where a command about a directory syncs to, and as which host: the one
 * place that weighs a command's flags, the directory's memory of its first
 * sync (`<dir>/.ferry/root.db`, client/store/binding.ts) and the
 * environment. Callers: the host commands (session.ts), a watch admitting
 * another process's command (resident-server.ts), and the commands that
 * only read the server about a directory (log, open, restore).
 *
 * The order is flag, then the directory's binding, then environment, then
 * defaults. The binding comes before the environment because the
 * environment belongs to a shell, not to a directory: a FERRY_WORKSPACE
 * exported for one folder must not make every other folder's command fail
 * (or sync elsewhere), as a git remote is the repository's, not the
 * shell's. A flag is what the person asked for this time: a flag that
 * differs from the binding is refused (`bound_elsewhere`) unless `--rebind`,
 * which sets the binding aside (flag, then environment).
 */
import { isAbsolute, posix, relative, resolve, sep } from "node:path";
import { isValidLabel } from "../../protocol/label.ts";
import type { Remembered } from "../store/binding.ts";
import { findRoot } from "../store/find-root.ts";
import type { Endpoint } from "../transport/transport.ts";
import { type EndpointFlags, resolveEndpoint } from "./endpoint.ts";
import { CliError } from "./errors.ts";

export interface FolderFlags extends EndpointFlags {
  /** This host's readable name; only this changes the one the directory remembers. */
  readonly label?: string;
  /** Set the directory's binding aside: sync with what the flags and environment name. */
  readonly rebind?: boolean;
}

export interface FolderEndpoint {
  readonly endpoint: Endpoint;
  /** The label to ask for, or undefined for openWorkspace's default (the hostname). */
  readonly label: string | undefined;
}

/** The endpoint and label of a command on a directory bound to `bound` (null: never synced). */
export function resolveFolderEndpoint(
  flags: FolderFlags,
  bound: Remembered | null,
  env: NodeJS.ProcessEnv = process.env,
): FolderEndpoint {
  const remembered = flags.rebind === true ? null : bound;
  const endpoint = resolveEndpoint(
    remembered === null
      ? flags
      : { ...flags, url: flags.url ?? remembered.url, workspace: flags.workspace ?? remembered.workspace },
    env,
  );
  const label = flags.label ?? bound?.label ?? (env.FERRY_LABEL || undefined);
  if (label !== undefined && !isValidLabel(label)) {
    throw new CliError(
      "usage",
      `--label '${label}': expected 1 to 63 of A-Z a-z 0-9 . _ - (starting with a letter or digit)`,
    );
  }
  return { endpoint, label };
}

/**
 * The endpoint of a command that only reads the server about a directory
 * (`ferry open`, `ferry log`): a directory bound to another workspace than
 * a flag names is refused, so one workspace's page or history is never
 * shown as another's. A directory inside a synced folder stands for that
 * folder, and a path given with it is relative to it (workspacePathOf).
 */
export async function resolveDirEndpoint(
  dir: string,
  flags: EndpointFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Endpoint> {
  // Loaded when the command runs: the binding opens SQLite, which `ferry --help` never needs.
  const { BoundElsewhereError, RootBinding, sameBinding } = await import("../store/binding.ts");
  const root = findRoot(dir)?.root ?? resolve(dir);
  const bound = RootBinding.peek(root);
  const { endpoint } = resolveFolderEndpoint(flags, bound, env);
  if (bound && !sameBinding(bound, endpoint)) {
    throw new BoundElsewhereError(root, bound, endpoint, "leave out --workspace and --url to use it");
  }
  return endpoint;
}

/**
 * A path as `ferry log` and `ferry restore` take it, relative to `dir` (so
 * relative to where the command runs with `.`), as the workspace path it
 * names: `ferry log hostA/src a.txt` and `cd hostA/src; ferry log . a.txt`
 * both name `src/a.txt`. `./a/b` and `a/b/` name `a/b`; "" is the root.
 */
export function workspacePathOf(dir: string, path: string): string {
  const found = findRoot(dir);
  const joined = isAbsolute(path)
    ? relative(found?.root ?? resolve(dir), path)
        .split(sep)
        .join("/")
    : posix.join(found?.sub ?? "", path);
  const cleaned = posix.normalize(joined).replace(/\/+$/, "");
  if (cleaned === ".." || cleaned.startsWith("../"))
    throw new CliError("invalid_path", `${path} is outside the synced folder ${found?.root ?? resolve(dir)}`);
  return cleaned === "." ? "" : cleaned;
}

/**
 * The endpoint of a workspace-wide command (`workspace stats`, `gc`,
 * `workspace delete`) named by no `-w` nor `--url`: run inside a directory
 * that was synced (or below it), the workspace and server it remembers,
 * before the environment, as for a command on that directory.
 */
export async function resolveHereEndpoint(
  flags: EndpointFlags,
  cwd: string = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<Endpoint> {
  if (flags.workspace !== undefined || flags.url !== undefined) return resolveEndpoint(flags, env);
  const found = findRoot(cwd);
  if (found === null) return resolveEndpoint(flags, env);
  const { RootBinding } = await import("../store/binding.ts");
  return resolveFolderEndpoint(flags, RootBinding.peek(found.root), env).endpoint;
}
