import { ProtocolError } from "../protocol/errors.ts";
import { isValidWorkspaceName } from "../protocol/paths.ts";
import type { Env } from "./env.ts";

/** The workspace's object by name; `invalid_workspace` for a name outside the rule. */
export function workspaceStub(env: Env, name: string) {
  if (!isValidWorkspaceName(name)) {
    throw new ProtocolError("invalid_workspace", "workspace names match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", {
      workspace: name,
    });
  }
  return env.WORKSPACE.get(env.WORKSPACE.idFromName(name));
}
