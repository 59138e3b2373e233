/**
 * The endpoint of a command that only reads the server about a directory
 * (`ferry open`, `ferry log`): the workspace named by flags or env, else the
 * one the directory syncs with (client/store/binding.ts); a directory bound
 * to another workspace is refused, so one workspace's page or history is
 * never shown as another's.
 */
import { resolve } from "node:path";
import type { Endpoint } from "../transport/transport.ts";
import { type EndpointFlags, resolveEndpoint } from "./endpoint.ts";

export async function resolveDirEndpoint(
  dir: string,
  flags: EndpointFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Endpoint> {
  // Loaded when the command runs: the binding opens SQLite, which `ferry --help` never needs.
  const { BoundElsewhereError, RootBinding, sameBinding } = await import("../store/binding.ts");
  const root = resolve(dir);
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
