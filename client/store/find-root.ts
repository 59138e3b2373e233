/**
 * Which synced folder a path belongs to, found as git finds a repository:
 * the nearest directory at or above it (after resolving symlinks) whose
 * `.ferry/` holds the directory's binding (`root.db`, store/binding.ts) or a
 * store (`store.db`). A `.ferry/` with neither (a config folder of the same
 * name in a home directory) does not make a root. Every command given a
 * path works on the root it finds (cli/session.ts, workspace.ts), so a
 * second root is never made below a first. Only node:fs and node:path:
 * cli.ts calls it before the store or the engine is loaded.
 */
import { type Dirent, existsSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { STORE_DIR } from "./store-dir.ts";

/** The files whose presence in `<dir>/.ferry/` makes `<dir>` a synced folder. */
const ROOT_MARKERS = ["root.db", "store.db"] as const;

export interface EnclosingRoot {
  /** The synced folder (its real path). */
  readonly root: string;
  /** Where the path asked for is under it, `/`-separated; "" for the root itself. */
  readonly sub: string;
}

/** True when `dir` is a synced folder (its `.ferry/` holds a binding or a store). */
export function isRoot(dir: string): boolean {
  return ROOT_MARKERS.some((name) => existsSync(join(dir, STORE_DIR, name)));
}

/**
 * The synced folder `path` is in (the folder itself, or the nearest one
 * above it), or null when there is none: then `path` would be a new root.
 * `path` need not exist (a pull into a folder not made yet): the walk
 * starts at its nearest existing ancestor.
 */
export function findRoot(path: string): EnclosingRoot | null {
  const asked = resolve(path);
  let existing = asked;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  let real: string;
  try {
    real = realpathSync(existing);
  } catch {
    return null;
  }
  const start = join(real, relative(existing, asked));
  for (let dir = start; ; dir = dirname(dir)) {
    if (isRoot(dir)) return { root: dir, sub: relative(dir, start).split(sep).join("/") };
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The first synced folder below `root` (relative to it), or null: what a
 * new root above an existing one would sync twice (its files as the new
 * root's content, and again by the folder's own host). Walks the whole tree
 * (directories only, symlinks not followed), so callers ask only before a
 * root's first sync.
 */
export function rootBelow(root: string): string | null {
  const stack = [root];
  for (let dir = stack.pop(); dir !== undefined; dir = stack.pop()) {
    let names: Dirent[];
    try {
      names = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable: the scan says so
    }
    for (const d of names) {
      if (!d.isDirectory()) continue;
      const child = join(dir, d.name);
      if (d.name === STORE_DIR) {
        if (dir !== root && isRoot(dir)) return relative(root, dir).split(sep).join("/");
        continue;
      }
      stack.push(child);
    }
  }
  return null;
}

/** A new root above an existing one (rootBelow): refused before anything is made. */
export class NestedRootError extends Error {
  readonly code = "nested_root";
  constructor(root: string, below: string) {
    super(
      `${root} holds the synced folder ${below}: syncing both would send its files twice; ` +
        `sync ${join(root, below)} on its own, or move it out, or delete ${join(root, below, STORE_DIR)} to sync it as content of ${root}`,
    );
    this.name = "NestedRootError";
  }
}

/** The folder `dir` syncs as: its enclosing root, or itself when it holds no root below it (workspace.ts). */
export function rootToOpen(dir: string): string {
  const found = findRoot(dir);
  if (found !== null) return found.root;
  const root = realpathSync(resolve(dir));
  const below = rootBelow(root);
  if (below !== null) throw new NestedRootError(root, below);
  return root;
}
