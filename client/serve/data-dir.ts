/**
 * Where `ferry serve` keeps its storage, and the one-time adoption of what a
 * `wrangler dev` server (the local server before `ferry serve`) kept under
 * `.wrangler/state`. Both lay Durable Object SQLite out the same way,
 * `do/<worker>-<class>/<object id>.sqlite`, and an object's id depends only on
 * the worker name, class and workspace name, so a copied file is the same
 * workspace with the same epoch and history.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { SERVER_DATA_NAME, STORE_NAME } from "../scan/rule-chain.ts";
import { namespaceKey, type RuntimeSettings } from "./worker-source.ts";

/** A scan leaves this name alone at any depth (rule-chain.ts), so a project can hold its server. */
export const DEFAULT_DATA_DIR = SERVER_DATA_NAME;
/** What `npm start` persisted to before `ferry serve` (`wrangler dev --persist-to .wrangler/state`). */
export const WRANGLER_STATE_DIR = ".wrangler/state";

/** The disk workerd stores Durable Objects on (runtime-config.ts); it adds one folder per namespace. */
export function objectsRoot(dataDir: string): string {
  return join(dataDir, "do");
}

/**
 * The disk the local R2 buckets live on (local-r2.ts): `<data>/r2`, as
 * `wrangler dev` keeps them under `.wrangler/state/v3/r2`. `ferry serve
 * --no-r2` leaves it alone, so a later start with R2 finds it as it was.
 */
export function r2Root(dataDir: string): string {
  return join(dataDir, "r2");
}

/** The folders holding each namespace's SQLite files under a data directory. */
function objectsDirs(dataDir: string, source: RuntimeSettings): string[] {
  return source.durableObjects.map((d) => join(objectsRoot(dataDir), namespaceKey(source, d)));
}

/** Objects stored under a data directory: one SQLite file each, besides workerd's metadata.sqlite. */
export function countWorkspaces(dataDir: string, source: RuntimeSettings): number {
  return objectsDirs(dataDir, source)
    .filter((dir) => existsSync(dir))
    .flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite")).length;
}

/**
 * Copies wrangler dev's workspaces into `dataDir` when `dataDir` holds none
 * yet and `<cwd>/.wrangler/state` does; the old copy is left where it is (it
 * is still what `npm run wrangler dev` reads). Returns how many were copied.
 * Called by `ferry serve` for its default data directory only: an explicit
 * --data means the caller chose what to run on.
 */
export function adoptWranglerState(dataDir: string, source: RuntimeSettings, cwd = process.cwd()): number {
  const from = objectsDirs(resolve(cwd, WRANGLER_STATE_DIR, "v3"), source);
  const to = objectsDirs(dataDir, source);
  if (!from.some((dir) => existsSync(dir)) || to.some((dir) => existsSync(dir))) return 0;
  from.forEach((dir, i) => {
    if (existsSync(dir)) cpSync(dir, to[i] as string, { recursive: true, errorOnExist: true });
  });
  return countWorkspaces(dataDir, source);
}

/**
 * The synced folder (one holding `.ferry/`) that `dataDir` would be synced
 * with, or null. Inside a `.ferry-server` it never is: scans leave that name
 * alone. Any other data directory inside a synced folder would travel as
 * files, and every push would write new ones to push.
 */
export function syncedFolderHolding(dataDir: string): string | null {
  for (let dir = dirname(dataDir); ; dir = dirname(dir)) {
    if (isDirectory(join(dir, STORE_NAME))) {
      const below = relative(dir, dataDir).split(sep);
      return below.includes(SERVER_DATA_NAME) ? null : dir;
    }
    if (dirname(dir) === dir) return null;
  }
}

/** Made (or kept) this user's alone: its packs and databases hold every workspace's bytes. */
export function makePrivate(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if ((statSync(dataDir).mode & 0o077) !== 0) chmodSync(dataDir, 0o700);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
