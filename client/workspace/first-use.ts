/**
 * A directory's first command that fails leaves nothing behind (issue 29):
 * no `<dir>/.ferry/` here, and, refused before its hello is answered, no
 * host row there. Callers:
 * openWorkspace (workspace.ts), and the CLI for the directory it made
 * (cli/session.ts).
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { HelloResponse } from "../../protocol/hello.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import type { Binding } from "../store/binding.ts";
import { STORE_DIR } from "../store/sqlite-store.ts";
import type { HostStore } from "../store/store.ts";
import type { Transport } from "../transport/transport.ts";

/** `pull` of a workspace whose rev is 0 (nothing was ever pushed to it), without `create`. */
export class NoSuchWorkspaceError extends Error {
  readonly code = "no_such_workspace";
  constructor(binding: Binding) {
    super(
      `nothing was ever pushed to workspace '${binding.workspace}' at ${binding.url}: ` +
        "check its name, or pass --create to start it empty",
    );
    this.name = "NoSuchWorkspaceError";
  }
}

/**
 * Before a directory's first pull, which must not create the workspace:
 * a look (PROTOCOL.md §4.1, `look`, which records nothing) under an id no
 * host has, so that a typo is refused before the real hello records this
 * host in the workspace it names.
 */
export async function refuseUnknownWorkspace(transport: Transport, asked: Binding): Promise<HelloResponse> {
  const hello = await transport.call("hello", {
    version: PROTOCOL_VERSION,
    hostId: new Uint8Array(randomBytes(16)),
    hostRev: 0,
    capabilities: [],
    look: true,
  });
  if (hello.rev === 0) throw new NoSuchWorkspaceError(asked);
  return hello;
}

/** Whether `root` has no `.ferry/` yet: then one this run makes and never binds is removed at its end. */
export function isFresh(root: string): boolean {
  return !existsSync(join(root, STORE_DIR));
}

/**
 * Whether `store` agreed nothing with the server: no push acknowledged, no
 * pull position, no path a pull wrote. A directory's first run that failed
 * so (no server, a refused token, the workspace's bytes out of reach) has
 * changed nothing but `.ferry/`, which then goes too (openWorkspace's close);
 * one that wrote paths keeps it, to resume and to know them as the server's.
 */
export function agreedNothing(store: HostStore): boolean {
  const { acked, pull } = store.position();
  if (acked.rev > 0 || pull !== null) return false;
  for (const record of store.all()) if (record.serverRev > 0) return false;
  return true;
}

/** Removes the `.ferry/` of a first run that failed having agreed nothing with the server. */
export function removeUnboundStore(root: string): void {
  rmSync(join(root, STORE_DIR), { recursive: true, force: true });
}

/** Removes a directory a refused command made, when it is still empty. */
export function removeIfEmpty(dir: string): void {
  try {
    if (readdirSync(dir).length === 0) rmdirSync(dir);
  } catch {
    // Gone already, or not ours to remove: the refusal itself is what the user sees.
  }
}
