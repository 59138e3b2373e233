/**
 * The applier's temporary files (`<prefix><pid>-<n>`, a file or a symlink)
 * are renamed into place at once: one whose writer is not running was left
 * by a killed pull, and goes at the next scan. One of this process that it
 * no longer uses was left by a write that failed because its directory
 * moved under it (taking the temporary file along), and goes too. One of a
 * running process that is not this one (a second host on this root), or
 * without a pid, goes after an hour. Only the scanner of a store's owner (it
 * holds the store's lock) removes them.
 */
import { type BigIntStats, unlinkSync } from "node:fs";
import { basename } from "node:path";
import { TEMP_PREFIX } from "./ignore-rules.ts";
import { mtimeMs } from "./stat-key.ts";

const STALE_TEMP_MS = 3600_000;

/** This process's temporary names in use: made and not yet renamed into place or removed (engine/replace-guard.ts). */
const inUse = new Set<string>();

export function claimTemp(name: string): void {
  inUse.add(name);
}

export function releaseTemp(abs: string): void {
  inUse.delete(basename(abs));
}

/** Removes the temporary file at `abs` when no running writer can still rename it. */
export function removeIfStale(abs: string, st: BigIntStats): void {
  if (st.isDirectory() || inUse.has(basename(abs))) return;
  const pid = Number(/^(\d+)-/.exec(basename(abs).slice(TEMP_PREFIX.length))?.[1]);
  const writerMayRun = pid !== process.pid && (!Number.isSafeInteger(pid) || isRunning(pid));
  if (writerMayRun && Date.now() - mtimeMs(st) < STALE_TEMP_MS) return;
  try {
    unlinkSync(abs);
  } catch {
    // Its writer finished or removed it first: stale no longer.
  }
}

/** Whether a process with this id runs (signal 0 only checks; EPERM: it runs as another user). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
