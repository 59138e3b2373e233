/**
 * The CLI's split walk (client/scan/split-walk.ts): the worker's code is the
 * bundle's dist/cli/chunks/walk-worker.cjs, beside this chunk. From
 * source (FERRY_FROM_SOURCE, tsx) there is no bundle: one thread.
 * FERRY_WALK_SPLIT sets the fewest recorded paths for two threads, or `off`.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { WalkSplit } from "../scan/split-walk.ts";

/**
 * From this many recorded paths a scan walks on two threads. A worker costs
 * ~90 ms of CPU; below ~10,000 paths (a walk of ~150 ms) the second thread
 * saves less wall time than it costs.
 */
const SPLIT_FROM_PATHS = 10_000;

export function cliWalkSplit(setting = process.env.FERRY_WALK_SPLIT): WalkSplit | null {
  if (setting === "off") return null;
  const minPaths = setting === undefined || setting === "" ? SPLIT_FROM_PATHS : Number(setting);
  if (!Number.isSafeInteger(minPaths) || minPaths < 0) return null;
  const script = fileURLToPath(new URL("walk-worker.cjs", import.meta.url));
  return existsSync(script) ? { script, minPaths } : null;
}
