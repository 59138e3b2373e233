import { ProtocolError } from "../protocol/errors.ts";
import { isValidWorkspaceName } from "../protocol/paths.ts";
import type { Env } from "./env.ts";

/** `invalid_workspace` unless `name` (decoded) follows the rule. */
export function checkWorkspaceName(name: string): void {
  if (!isValidWorkspaceName(name)) {
    throw new ProtocolError("invalid_workspace", "workspace names match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", {
      workspace: name,
    });
  }
}

/**
 * The name segment of a path under `/v1/workspaces/`, percent-decoded (null for any other path):
 * `a%2Fb` is the name `a/b`, never a route under `a`. A segment that does not decode is kept as sent,
 * which the rule refuses.
 */
export function workspaceSegment(path: string): string | null {
  const match = /^\/v1\/workspaces\/([^/]*)/.exec(path);
  if (match === null) return null;
  const raw = match[1] as string;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The workspace's object by name; `invalid_workspace` for a name outside the rule. */
export function workspaceStub(env: Env, name: string) {
  checkWorkspaceName(name);
  return env.WORKSPACE.get(env.WORKSPACE.idFromName(name));
}
