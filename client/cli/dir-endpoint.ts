/**
 * The endpoint of a command that only reads the server about a directory
 * (`ferry open`, `ferry log`): the workspace named by flags or env, else the
 * one the directory syncs with (client/store/binding.ts); a directory bound
 * to another workspace is refused, so one workspace's page or history is
 * never shown as another's. A directory inside a synced folder stands for
 * that folder, and a path given with it is relative to it (workspacePathOf).
 */
import { isAbsolute, posix, relative, resolve, sep } from "node:path";
import { findRoot } from "../store/find-root.ts";
import type { Endpoint } from "../transport/transport.ts";
import { type EndpointFlags, resolveEndpoint } from "./endpoint.ts";
import { CliError } from "./errors.ts";

export async function resolveDirEndpoint(
  dir: string,
  flags: EndpointFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Endpoint> {
  // Loaded when the command runs: the binding opens SQLite, which `ferry --help` never needs.
  const { BoundElsewhereError, RootBinding, sameBinding } = await import("../store/binding.ts");
  const root = findRoot(dir)?.root ?? resolve(dir);
  const bound = RootBinding.peek(root);
  const named = flags.workspace ?? (env.FERRY_WORKSPACE || undefined);
  const endpoint = resolveEndpoint(
    named === undefined && bound !== null
      ? { ...flags, workspace: bound.workspace, url: flags.url ?? env.FERRY_URL ?? bound.url }
      : flags,
    env,
  );
  if (bound && !sameBinding(bound, endpoint)) {
    throw new BoundElsewhereError(root, bound, endpoint, "name it with --workspace or FERRY_WORKSPACE");
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
