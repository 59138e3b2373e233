/**
 * Directories a host made only to hold server paths under a directory the
 * server deleted (apply.ts makeParents; a host may push a child over its
 * directory's deletion, PROTOCOL.md §4.5 rules 7 and 8). Once nothing is
 * left in one, it goes: no host that pulls later makes it, so kept it would
 * be this host's alone. The pull calls this after it removes a path
 * (remove.ts; soak seed 18), the push after the server took a deletion this
 * host made itself (push.ts; soak seed 65), which no pull brings back.
 */
import { rmdirSync } from "node:fs";
import type { Entry } from "../../protocol/entry.ts";
import { signatureMatches } from "../common/entry-state.ts";
import { trace } from "../common/trace.ts";
import { statKey } from "../scan/stat-key.ts";
import type { PathRecord } from "../store/store.ts";
import { lstatOrNull } from "./disk.ts";

/** The records and disk the caller sees: the pull's overlay (apply-state.ts) or the store itself. */
export interface EmptiedDirsView {
  record(path: string): PathRecord | undefined;
  setRecord(path: string, record: PathRecord): void;
  isPending(hostRev: number): boolean;
  abs(path: string): string;
}

/**
 * After `path` was removed: its ancestors, nearest first, go while each is
 * an empty directory whose record still agrees with the server's deletion
 * of it and matches the disk (a directory changed here is local work).
 * One with no record of what the server holds (a conflict copy took it)
 * may be the server's and stays (soak seed 91). Returns true when one went.
 */
export function removeEmptiedParents(view: EmptiedDirsView, path: string): boolean {
  let removed = false;
  for (let dir = parentOf(path); dir !== null; dir = parentOf(dir)) {
    const r = view.record(dir);
    if (r?.entry.kind !== "dir" || view.isPending(r.hostRev)) break;
    const gone: Entry = { kind: "gone", path: dir };
    if (!signatureMatches(gone, r.agreed)) break;
    const st = lstatOrNull(view.abs(dir));
    if (!st?.isDirectory() || statKey(st) !== r.stat || !rmdirIfEmpty(view.abs(dir))) break;
    removed = true;
    trace(() => `removed ${dir}: emptied, and the server holds no directory there`);
    view.setRecord(dir, { ...r, entry: gone, sizes: [], stat: null });
  }
  return removed;
}

/** Removes `abs` when it is an empty directory; false when a local process put something there (or took it) meanwhile. */
function rmdirIfEmpty(abs: string): boolean {
  try {
    rmdirSync(abs);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOENT") return false;
    throw e;
  }
}

/** The directory holding `path`, or null at the root. */
function parentOf(path: string): string | null {
  const i = path.lastIndexOf("/");
  return i < 0 ? null : path.slice(0, i);
}
