/**
 * The part of a large walk a worker thread takes (split-walk.ts): the paths
 * from a cut on (walk-cut.ts), with the store's rows of those paths. It only
 * lstat's and compares; a path whose fingerprint moved goes back to the main
 * thread, which reads it (its bytes, the store's record, the early upload
 * are all there). What it finds is what the scanner's own walk would find
 * over the same paths.
 */
import { rowStat } from "../store/fingerprint-rows.ts";
import { IgnoreRules } from "./ignore-rules.ts";
import { KnownPaths, type LeftPath } from "./known-paths.ts";
import { diskKind, statKey } from "./stat-key.ts";
import { type Listing, type Skipped, TreeWalk } from "./tree-walk.ts";
import { stackAfterCut } from "./walk-cut.ts";

export interface WalkJob {
  /** The scanned root (absolute and real). */
  readonly root: string;
  /** The first path of the part (walk-cut.ts). */
  readonly cut: string;
  /** The store's fingerprint rows of the paths from the cut on. */
  readonly rows: string[];
  /** The scanner's ignore patterns (IgnoreRules.patterns). */
  readonly ignorePatterns: readonly string[];
  /** Hand back the appliers' temporary files the walk passes: only the main thread knows which it uses (stale-temp.ts). */
  readonly temps: boolean;
}

/** A walked path whose fingerprint moved: its name, and the store's row of it (undefined: no record). */
export interface MovedPath {
  readonly path: string;
  readonly name: string;
  readonly row: string | undefined;
}

export interface WalkedPart {
  /** Paths walked and synced, as ScanResult.seen counts them. */
  readonly seen: number;
  /** In walk order: the main thread lstat's and compares each again, then reads it. */
  readonly moved: MovedPath[];
  readonly skipped: Skipped;
  /** The part's recorded paths the walk did not find. */
  readonly left: LeftPath[];
  /** The appliers' temporary files passed (when the job asks). */
  readonly temps: string[];
}

export function walkPart(job: WalkJob): WalkedPart {
  const ignore = new IgnoreRules(job.ignorePatterns);
  const temps: string[] = [];
  const walk = new TreeWalk(job.root, ignore, job.temps ? (rel) => temps.push(rel) : null);
  const known = new KnownPaths(job.rows);
  const moved: MovedPath[] = [];
  const skipped: Skipped = [];
  let seen = 0;
  const stack = stackFromCut(walk, ignore, known, job.cut);
  while (stack.length > 0) {
    const listing = stack[stack.length - 1] as (typeof stack)[number];
    if (listing.next === listing.names.length) {
      stack.pop();
      continue;
    }
    const name = listing.names[listing.next++] as string;
    const rel = listing.dir === "" ? name : `${listing.dir}/${name}`;
    const st = walk.entry(rel, name, skipped);
    if (st === null) continue;
    seen++;
    const row = known.takeRow(rel);
    if (row === undefined || statKey(st) !== rowStat(row, rel)) moved.push({ path: rel, name, row });
    if (diskKind(st) === "dir") {
      const names = walk.list(rel, known, skipped);
      if (names !== null) stack.push({ dir: rel, names, next: 0 });
    }
  }
  return { seen, moved, skipped, left: known.left(), temps };
}

/**
 * The stack a walk of the part from `cut` on starts with (stackAfterCut).
 * The directories on the cut's path are the main thread's to check and
 * report as entries; here they are only entered, when the walk would enter
 * them (a directory, not ignored, readable).
 */
export function stackFromCut(walk: TreeWalk, ignore: IgnoreRules, known: KnownPaths, cut: string): Listing[] {
  return stackAfterCut(cut, (dir, name) => {
    if (dir !== "") {
      const st = walk.lstat(dir);
      if (st === null || diskKind(st) !== "dir" || ignore.ignoresEntry(dir, name, true)) return null;
    }
    return walk.list(dir, known, null);
  });
}
