/**
 * A push that would delete most of the tree at once is held back unless the
 * user confirms it (`--allow-mass-delete`, the library's `allowMassDelete`):
 * a folder emptied by mistake (`rm -rf dir/*`, a script run in the wrong
 * place, a volume that lost its contents) would otherwise be emptied on
 * every host. The engine asks before every push (engine/sync.ts); the
 * deletions stay pending in the store, so the confirmed push sends them in
 * one explicit step. A watch pushes a burst of deletions in parts (one
 * sync per settled burst): the deletions pushed within WINDOW_MS count with
 * the ones pending, so a tree emptied in several syncs is caught too.
 */
import type { HostStore } from "../store/store.ts";

/** When a push counts as a mass deletion (README "Safety rails"). */
export interface MassDeleteRule {
  /** More than this share (0 to 1) of the tree's paths... */
  readonly share: number;
  /** ...of a tree of at least this many paths. */
  readonly minPaths: number;
  /** Or every path of a tree of at least this many. */
  readonly allMinPaths: number;
}

export const DEFAULT_MASS_DELETE: MassDeleteRule = { share: 0.5, minPaths: 1000, allMinPaths: 10 };

/** How long deletions already pushed count with the next push's. */
const WINDOW_MS = 60_000;

/** The push was held back: nothing of it was sent. */
export class MassDeleteError extends Error {
  readonly code = "mass_delete";
  constructor(
    readonly deleting: number,
    readonly paths: number,
    root: string,
  ) {
    super(
      `this push would delete ${deleting} of the ${paths} paths of ${root}: held back, nothing pushed. ` +
        `If you meant it, push once with --allow-mass-delete; if not, bring the files back ` +
        `(a ferry pull into another folder has them) and sync again`,
    );
    this.name = "MassDeleteError";
  }
}

/**
 * `FERRY_MASS_DELETE`: `off`, or `<share>%:<min paths>:<all min paths>`
 * (the default is `50%:1000:10`); a later part may be left out.
 */
export function parseMassDeleteRule(text: string): MassDeleteRule | null {
  if (text.trim() === "off") return null;
  const m = /^\s*(\d+(?:\.\d+)?)%(?::(\d+))?(?::(\d+))?\s*$/.exec(text);
  if (!m)
    throw new RangeError(`FERRY_MASS_DELETE: expected off or <share>%:<min paths>:<all min paths>, got '${text}'`);
  const share = Number(m[1]) / 100;
  if (share > 1) throw new RangeError(`FERRY_MASS_DELETE: a share is at most 100%, got '${text}'`);
  return {
    share,
    minPaths: m[2] === undefined ? DEFAULT_MASS_DELETE.minPaths : Number(m[2]),
    allMinPaths: m[3] === undefined ? DEFAULT_MASS_DELETE.allMinPaths : Number(m[3]),
  };
}

/** The rule, and the deletions this host pushed lately. One per engine. */
export class DeletionGuard {
  private recent: { readonly at: number; readonly count: number }[] = [];

  constructor(
    private readonly rule: MassDeleteRule,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Throws MassDeleteError when pushing the store's pending changes (after
   * host rev `ackedRev`) would delete too much, unless `allowed`; returns
   * how many deletions the push carries, for `pushed`.
   */
  check(store: HostStore, ackedRev: number, root: string, allowed: boolean): number {
    const deleting = store.pendingDeletions(ackedRev);
    if (deleting === 0 || allowed) return deleting;
    const since = this.now() - WINDOW_MS;
    this.recent = this.recent.filter((r) => r.at >= since);
    const lately = deleting + this.recent.reduce((n, r) => n + r.count, 0);
    // Neither clause can hold below this many: the count of the tree is not worth reading.
    if (lately < Math.min(this.rule.allMinPaths, Math.floor(this.rule.share * this.rule.minPaths) + 1)) return deleting;
    const paths = store.livePaths() + lately;
    const all = lately >= paths && paths >= this.rule.allMinPaths;
    const most = paths >= this.rule.minPaths && lately > this.rule.share * paths;
    if (all || most) throw new MassDeleteError(lately, paths, root);
    return deleting;
  }

  /** A push carrying `count` deletions was sent. */
  pushed(count: number): void {
    if (count > 0) this.recent.push({ at: this.now(), count });
  }
}
