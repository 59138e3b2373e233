/**
 * The CLI's split walk (client/scan/split-walk.ts): the worker's code is the
 * bundle's dist/cli/chunks/walk-worker.cjs, beside this chunk. From
 * source (FERRY_FROM_SOURCE, tsx) there is no bundle: one thread.
 *
 * Off unless FERRY_WALK_SPLIT gives the fewest recorded paths for two
 * threads. On a quiet two-core machine the split saved 1% of a no-op sync
 * of 30,000 files (774 against 784 ms) for 26% more CPU (1,121 against
 * 890 ms): the worker's start (~100-170 ms of CPU here) eats what the
 * second thread's walk saves (BENCHMARKS.md section 15). A larger tree may
 * gain; none was measured.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { WalkSplit } from "../scan/split-walk.ts";

export function cliWalkSplit(setting = process.env.FERRY_WALK_SPLIT): WalkSplit | null {
  if (setting === undefined || setting === "" || setting === "off") return null;
  const minPaths = Number(setting);
  if (!Number.isSafeInteger(minPaths) || minPaths < 0) return null;
  const script = fileURLToPath(new URL("walk-worker.cjs", import.meta.url));
  return existsSync(script) ? { script, minPaths } : null;
}
