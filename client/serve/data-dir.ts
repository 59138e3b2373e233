/**
 * Where `ferry serve` keeps its storage, and the one-time adoption of what a
 * `wrangler dev` server (the local server before `ferry serve`) kept under
 * `.wrangler/state`. Both lay Durable Object SQLite out the same way,
 * `do/<worker>-<class>/<object id>.sqlite`, and an object's id depends only on
 * the worker name, class and workspace name, so a copied file is the same
 * workspace with the same epoch and history.
 */
import { cpSync, existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { WORKER_NAME, WORKSPACE_BINDING } from "./worker-source.ts";

export const DEFAULT_DATA_DIR = ".ferry-server";
/** What `npm start` persisted to before `ferry serve` (`wrangler dev --persist-to .wrangler/state`). */
export const WRANGLER_STATE_DIR = ".wrangler/state";

const OBJECTS_FOLDER = `${WORKER_NAME}-${WORKSPACE_BINDING.className}`;

/** Where launch.ts tells Miniflare to persist Durable Objects; it adds one folder per class. */
export function objectsRoot(dataDir: string): string {
  return join(dataDir, "do");
}

/** The folder holding the workspaces' SQLite files under a data directory. */
export function objectsDir(dataDir: string): string {
  return join(objectsRoot(dataDir), OBJECTS_FOLDER);
}

/** Workspaces stored under a data directory: one SQLite file each, besides Miniflare's metadata.sqlite. */
export function countWorkspaces(dataDir: string): number {
  const dir = objectsDir(dataDir);
  if (!existsSync(dir)) return 0;
  return readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite").length;
}

/**
 * Copies wrangler dev's workspaces into `dataDir` when `dataDir` holds none
 * yet and `<cwd>/.wrangler/state` does; the old copy is left where it is (it
 * is still what `npm run wrangler dev` reads). Returns how many were copied.
 * Called by `ferry serve` for its default data directory only: an explicit
 * --data means the caller chose what to run on.
 */
export function adoptWranglerState(dataDir: string, cwd = process.cwd()): number {
  const from = objectsDir(resolve(cwd, WRANGLER_STATE_DIR, "v3"));
  if (!existsSync(from) || existsSync(objectsDir(dataDir))) return 0;
  cpSync(from, objectsDir(dataDir), { recursive: true, errorOnExist: true });
  return countWorkspaces(dataDir);
}
