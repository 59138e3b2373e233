/**
 * The synced folder a host opened, held to its identity: the device and
 * inode of the root and of its `.ferry/` (the folder's marker, which holds
 * the binding and the store) as they were when the host opened it. A host
 * whose root was deleted (`rm -rf`, its `.ferry/` included), moved away,
 * replaced (a folder made again at the path, a volume mounted over it), or
 * unmounted (an empty mount point left) would otherwise scan it as emptied
 * and push the deletion of every path to every host: the engine checks the
 * identity before it scans and before every pack it pushes
 * (engine/sync.ts), and stops with RootGoneError instead.
 * Callers: workspace.ts, for every host it opens.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { STORE_DIR } from "./store-dir.ts";

/** The synced folder is no longer the one the host opened: nothing is scanned or pushed. */
export class RootGoneError extends Error {
  readonly code: "root_gone" | "root_replaced";
  constructor(code: "root_gone" | "root_replaced", what: string) {
    super(`${what}: stopped, nothing pushed (the workspace is untouched; sync the folder again once it is back)`);
    this.code = code;
    this.name = "RootGoneError";
  }
}

interface Identity {
  readonly dev: number;
  readonly ino: number;
}

function identityOf(path: string): Identity | null {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

const same = (a: Identity | null, b: Identity | null) => a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;

/**
 * Takes `root`'s identity now, and with `marked` that of its `.ferry/`
 * (absent for a look at a folder never synced, which makes none). Returns
 * the check, which throws RootGoneError once either is gone or replaced.
 */
export function holdRootIdentity(root: string, marked: boolean): () => void {
  const marker = join(root, STORE_DIR);
  const rootAt = identityOf(root);
  const markerAt = marked ? identityOf(marker) : null;
  return () => {
    const now = identityOf(root);
    if (now === null) throw new RootGoneError("root_gone", `${root} is gone (deleted, moved or unmounted)`);
    if (!same(now, rootAt))
      throw new RootGoneError(
        "root_replaced",
        `${root} is another folder now (made again, or a mount over it or gone)`,
      );
    if (!marked) return;
    const mark = identityOf(marker);
    if (mark === null) throw new RootGoneError("root_gone", `${marker} is gone (the folder is being deleted?)`);
    if (!same(mark, markerAt)) throw new RootGoneError("root_replaced", `${marker} is another folder now`);
  };
}
