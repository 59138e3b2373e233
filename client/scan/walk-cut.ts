/**
 * Where a large walk is cut in two (split-walk.ts): the main thread walks
 * every path the walk reaches before the cut, a worker thread the cut and
 * every path after it. The walk is depth first with each directory's names
 * sorted, so "after the cut" is, at each directory on the cut's path, the
 * names after the one the cut goes through: the worker starts with that
 * stack of listings, and the main thread's listings of the same directories
 * stop at the cut. The store's rows are split by the same order, so each
 * side's rows are exactly the paths its walk can reach.
 */
import type { Listing } from "./tree-walk.ts";

const SLASH = 0x2f;

/**
 * Whether the walk reaches `path` before `cut`. Not string order: at the
 * first name where the two paths differ, a name that is a prefix of the
 * other comes first (`a` and all under it before `a.js`), while as strings
 * `a/x` sorts after `a.js`.
 */
export function walksBefore(path: string, cut: string): boolean {
  const n = Math.min(path.length, cut.length);
  let i = 0;
  while (i < n && path.charCodeAt(i) === cut.charCodeAt(i)) i++;
  // The cut itself, or a path under it or whose name extends the cut's: after.
  if (i === cut.length) return false;
  const p = i === path.length ? 0 : path.charCodeAt(i);
  // `path` (or the row's path, which a NUL ends) is an ancestor of the cut, or a name the cut's name extends: before.
  if (p === 0) return true;
  const c = cut.charCodeAt(i);
  if (p === SLASH) return true;
  if (c === SLASH) return false;
  return p < c;
}

/** `paths` (fingerprint rows work too: a NUL ends the path) split into those walked before `cut` and the rest, each in its order. */
export function splitAtCut(rows: readonly string[], cut: string): [before: string[], after: string[]] {
  const before: string[] = [];
  const after: string[] = [];
  for (const row of rows) (walksBefore(row, cut) ? before : after).push(row);
  return [before, after];
}

/**
 * For the main thread's listing of `dir`: how many of its sorted `names`
 * the walk reaches before `cut` (all of them unless `dir` is on the cut's
 * path). `chain` is cutChain(cut).
 */
export function namesBeforeCut(dir: string, names: readonly string[], chain: ReadonlyMap<string, CutStep>): number {
  const step = chain.get(dir);
  return step === undefined ? names.length : countBefore(names, step);
}

/** How many of the sorted `names` come before the cut's `step` in their directory. */
function countBefore(names: readonly string[], step: CutStep): number {
  let at = 0;
  while (at < names.length && (step.last ? (names[at] as string) < step.name : (names[at] as string) <= step.name))
    at++;
  return at;
}

/** One directory on the cut's path: the name the cut goes through there, and whether it is the cut's own (last) name. */
export interface CutStep {
  readonly name: string;
  readonly last: boolean;
}

/** The directories on the cut's path ("" for the root), each with its step. */
export function cutChain(cut: string): Map<string, CutStep> {
  const names = cut.split("/");
  const chain = new Map<string, CutStep>();
  for (let i = 0; i < names.length; i++) {
    chain.set(names.slice(0, i).join("/"), { name: names[i] as string, last: i === names.length - 1 });
  }
  return chain;
}

/**
 * The worker's starting stack: for each directory on the cut's path, from
 * the root down, its names from the cut's on (after the name the cut goes
 * through, or from the cut's own name in its directory). `list` gives a
 * directory's sorted names, or null to stop: the directory is not one the
 * walk enters (gone, not a directory, ignored, unreadable), so neither is
 * anything below it.
 */
export function stackAfterCut(cut: string, list: (dir: string, name: string) => string[] | null): Listing[] {
  const stack: Listing[] = [];
  for (const [dir, step] of cutChain(cut)) {
    const names = list(dir, dir.slice(dir.lastIndexOf("/") + 1));
    if (names === null) break;
    stack.push({ dir, names, next: countBefore(names, step) });
  }
  // The root's listing at the bottom: the walk takes from the top, the deepest directory first.
  return stack;
}
