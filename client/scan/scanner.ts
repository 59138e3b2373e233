/**
 * The scanner: turns a directory into local changes. Each path is lstat'ed
 * (never followed) and compared with the store's stat fingerprint; only a
 * path whose fingerprint moved is read, chunked and hashed. A path whose
 * content turns out unchanged only gets its fingerprint refreshed; new,
 * changed, mode-changed, type-changed and deleted paths become changes that
 * `stampScan` records with new host revs.
 */
import type { BigIntStats } from "node:fs";
import { pathProblem } from "../../protocol/paths.ts";
import { sameState } from "../common/entry-state.ts";
import { runSteps } from "../common/steps.ts";
import { fingerprintRow, joinRows } from "../store/fingerprint-rows.ts";
import type { HostStore } from "../store/store.ts";
import { type IgnoreRules, ruleFileDir } from "./ignore-rules.ts";
import { KnownPaths } from "./known-paths.ts";
import { type HashCounters, type ReadOptions, readStateSteps, type ScannedState } from "./read-state.ts";
import { removeIfStale } from "./stale-temp.ts";
import { diskKind, statKey } from "./stat-key.ts";
import { type Listing, TreeWalk } from "./tree-walk.ts";

export interface ScanResult extends HashCounters {
  /** New local states to stamp, `gone` for deletions, in path order. */
  readonly changes: ScannedState[];
  /** Paths whose content is unchanged but whose fingerprint moved. */
  readonly refreshed: { readonly path: string; readonly stat: string | null }[];
  /** Recorded paths that are now ignored: forgotten locally, never deleted on the server. */
  readonly dropped: string[];
  /** The rules' digest they were dropped under (engine/ignored-left.ts); null when none was. */
  droppedUnder: string | null;
  /** Paths that cannot be synced (invalid names, unreadable, special files), with the reason. */
  readonly skipped: { readonly path: string; readonly reason: string }[];
  seen: number;
}

export type ScanProgress = (seen: number, hashedBytes: number) => void;

/**
 * Paths walked without a read between two pauses: a step of the generator
 * and a pause call per path were a few per cent of a cold walk, and the
 * pauses that matter (the early upload's queue, hello's answer every few
 * ms) need no finer grain than ~0.1 ms of walking.
 */
const PAUSE_EVERY = 16;
/** Paths between two progress calls: often enough that a scan of a few hundred paths shows it advancing. */
const PROGRESS_EVERY = 100;

function emptyScanResult(): ScanResult {
  return {
    changes: [],
    refreshed: [],
    dropped: [],
    droppedUnder: null,
    skipped: [],
    seen: 0,
    hashedFiles: 0,
    hashedBytes: 0,
  };
}

/**
 * Asked by Scanner.scanPausing after every PAUSE_EVERY paths, after each
 * file read and between the blocks of a large file (`beforeRead` false), and
 * right before a file's content is read (`beforeRead` true): a promise makes
 * the scan wait for it, null goes on at once.
 */
export type ScanPause = (beforeRead: boolean) => Promise<void> | null;

export interface ScanOptions extends ReadOptions {
  readonly onProgress?: ScanProgress;
  /** How many paths the store knew before the walk: the likely total, for progress (sync.ts). */
  readonly onKnown?: (paths: number) => void;
}

export class Scanner {
  private readonly walk: TreeWalk;

  constructor(
    root: string,
    private readonly store: HostStore,
    private readonly ignore: IgnoreRules,
    /** Remove stale temporary files of a killed applier (the engine's scans; never status). */
    removeTemps = false,
  ) {
    this.walk = new TreeWalk(root, ignore, removeTemps ? (rel, st) => removeIfStale(this.abs(rel), st) : null);
  }

  /** Scans the whole root, or only the subtree at `subtree` (itself included). */
  scan(subtree: string | null = null, options: ScanOptions = {}): ScanResult {
    return runSteps(this.steps(subtree, options));
  }

  /**
   * Scans the whole root, giving way between paths (and a large file's
   * blocks) whenever `pause` returns a promise: the engine uploads the chunks
   * `onChunk` sees while the scan goes on.
   */
  async scanPausing(pause: ScanPause, options: ScanOptions): Promise<ScanResult> {
    const steps = this.steps(null, options);
    try {
      for (;;) {
        const step = steps.next();
        if (step.done) return step.value;
        const wait = pause(step.value);
        if (wait) await wait;
      }
    } finally {
      // A walk left where it paused (a wait failed) is ended, closing a file it was reading; a no-op once done.
      steps.return(emptyScanResult());
    }
  }

  /**
   * The scan, one path per step: a generator, so that one walk (walkSteps)
   * serves the plain and the pausing scan. It yields `true` right before it
   * reads a file's content, `false` between the blocks of a large file
   * (chunkFileSteps) and after each path.
   */
  private *steps(subtree: string | null, options: ScanOptions): Generator<boolean, ScanResult, void> {
    const result = emptyScanResult();
    // What the store knew; the walk takes out each path it finds, so what is left is not on disk.
    const known = new KnownPaths(subtree === null ? this.store.fingerprints() : this.fingerprintsAt(subtree));
    options.onKnown?.(known.size);
    const { onProgress } = options;
    const count = () => {
      result.seen++;
      if (result.seen % PROGRESS_EVERY === 0) onProgress?.(result.seen, result.hashedBytes);
    };
    const stack: Listing[] = [];
    if (subtree === null) {
      this.push(stack, "", known, result);
    } else {
      // A watch's scan of a `.ferryignore` it saw change: the rules first, then the path under them.
      const rulesAt = ruleFileDir(subtree);
      if (rulesAt !== null) this.ignore.reload(rulesAt);
      // Checked like a walked name, so that the names under it need only their own checked.
      const problem = pathProblem(subtree);
      const st = problem === null ? this.walk.lstat(subtree) : null;
      if (problem !== null) result.skipped.push({ path: subtree, reason: problem });
      else if (st && diskKind(st) !== null && !this.ignore.ignoresPathOrAncestor(subtree, diskKind(st) === "dir")) {
        count();
        this.compare(subtree, st, statKey(st), known.take(subtree), result, options);
        if (diskKind(st) === "dir") this.push(stack, subtree, known, result);
        yield false;
      }
    }
    yield* this.walkSteps(stack, known, result, options, count);
    // Left over: not on disk. In path order, as the store would list them.
    for (const { path, gone } of known.left()) {
      if (this.ignore.ignoresPathOrAncestor(path, false) || this.ignore.ignoresPathOrAncestor(path, true)) {
        result.dropped.push(path);
      } else if (!gone) {
        result.changes.push({ entry: { kind: "gone", path }, sizes: [], stat: null });
      }
    }
    if (result.dropped.length > 0) result.droppedUnder = this.ignore.digest();
    onProgress?.(result.seen, result.hashedBytes);
    return result;
  }

  /**
   * The walk from `stack`, one path per step: depth first, names sorted in
   * each directory, on an explicit stack (nested generators cost a resume
   * per level for every path).
   */
  private *walkSteps(
    stack: Listing[],
    known: KnownPaths,
    result: ScanResult,
    options: ScanOptions,
    count: () => void,
  ): Generator<boolean, void, void> {
    let unpaused = 0;
    while (stack.length > 0) {
      const listing = stack[stack.length - 1] as Listing;
      if (listing.next === listing.names.length) {
        stack.pop();
        continue;
      }
      const name = listing.names[listing.next++] as string;
      const rel = listing.dir === "" ? name : `${listing.dir}/${name}`;
      const st = this.walk.entry(rel, name, listing.rules, known, result.skipped);
      if (st === null) continue;
      const key = statKey(st);
      const knownStat = known.take(rel, key);
      count();
      if (key !== knownStat && diskKind(st) === "file") {
        yield true;
        // Read in steps, so that a pausing scan gives way within a large file (chunkFileSteps).
        yield* this.compareSteps(rel, st, knownStat, result, options);
        unpaused = PAUSE_EVERY;
      } else {
        this.compare(rel, st, key, knownStat, result, options);
        if (diskKind(st) === "dir") this.push(stack, rel, known, result);
      }
      if (++unpaused >= PAUSE_EVERY) {
        unpaused = 0;
        yield false;
      }
    }
  }

  /** Lists `dir` onto the stack; nothing when it cannot be read. */
  private push(stack: Listing[], dir: string, known: KnownPaths, result: ScanResult): void {
    const listing = this.walk.list(dir, known, result.skipped);
    if (listing !== null) stack.push(listing);
  }

  /** The state of one path on disk now, or null when nothing syncable is there. */
  readState(rel: string): ScannedState | null {
    const st = this.walk.lstat(rel);
    return st ? runSteps(readStateSteps(this.abs(rel), rel, st, { hashedFiles: 0, hashedBytes: 0 }, {})) : null;
  }

  /** The store's fingerprint rows for `path` and what is under it (a watcher's scan of one subtree), joined. */
  private fingerprintsAt(path: string): string {
    const self = this.store.get(path);
    const records = self ? [self, ...this.store.under(path)] : this.store.under(path);
    return joinRows(records.map((r) => fingerprintRow(r.entry.path, r.entry.kind === "gone", r.stat)));
  }

  private compare(
    rel: string,
    st: BigIntStats,
    key: string | null,
    /** The store's fingerprint of `rel`; undefined when the store has no record of it. */
    knownStat: string | null | undefined,
    result: ScanResult,
    options: ScanOptions,
  ): void {
    if (knownStat !== undefined && knownStat !== null && knownStat === key) return;
    runSteps(this.compareSteps(rel, st, knownStat, result, options));
  }

  /** compare() of a path whose fingerprint moved (`knownStat`: the store's, undefined when new), in steps. */
  private *compareSteps(
    rel: string,
    st: BigIntStats,
    knownStat: string | null | undefined,
    result: ScanResult,
    options: ScanOptions,
  ): Generator<false, void, void> {
    const previous = knownStat === undefined ? undefined : this.store.get(rel);
    let state: ScannedState | null;
    try {
      state = yield* readStateSteps(this.abs(rel), rel, st, result, options, previous);
    } catch (e) {
      // Unreadable now (permissions, vanished mid-scan, a target no server takes): keep what we knew.
      result.skipped.push({ path: rel, reason: (e as NodeJS.ErrnoException).code ?? (e as Error).message });
      return;
    }
    if (!state) return;
    // Not recorded: the next scan (a watch's next event) reads it again, once it holds still.
    if (state.changedWhileRead) {
      result.skipped.push({ path: rel, reason: "changed while it was read; sent once it holds still" });
      return;
    }
    if (previous && sameState(previous.entry, state.entry)) {
      result.refreshed.push({ path: rel, stat: state.stat });
    } else {
      result.changes.push(state);
    }
  }

  private abs(rel: string): string {
    return this.walk.abs(rel);
  }
}
