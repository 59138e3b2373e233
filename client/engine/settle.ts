/**
 * When a watch (watch.ts) sends the paths its file events named: once a
 * burst of events is over, and for a file, once it has settled.
 *
 * - A burst ends when the tree is quiet for QUIET_MS, or is cut after
 *   MAX_BURST_MS (an install writing thousands of files is sent in parts).
 * - A path's own streak is its events, each within `windowMs` of the last.
 *   A file is settled once it has been quiet (no event, and its size,
 *   mtime, inode, mode and ctime what they were at its last event) for:
 *   - SAVE_QUIET_MS, when its streak lasted less than that (one save:
 *     its events within a few ms), so a finished save goes almost at once;
 *     BLOCK_QUIET_MS for a size that is a whole number of 4 KiB blocks,
 *     where a buffered writer's flush leaves a file it has not finished
 *     (a finished save ends there once in 4,096); LARGE_QUIET_MS for a
 *     file of LARGE_BYTES or more (a copy of a large file stalls for a few
 *     ms now and then, and its first megabytes would otherwise go alone);
 *   - WRITING_QUIET_MS or twice as long as its streak has lasted, if
 *     longer, when it lasted longer, or the file is empty (a writer that
 *     opened it): a file still being written, whose writer pauses for
 *     less than that between its writes, is sent once, whole;
 *   - at most `windowMs` either way, so 100 appends in 10 s make two or
 *     three revs, not 100; `windowMs` 0 sends every burst at once.
 *   A writer that pauses for longer than that looks done, and what it
 *   wrote so far is sent: a watch sees only events and stats.
 * - A streak that goes on past `maxMs` is sent anyway (a log, a live
 *   database): the push reads it as it is, and holds it if it changes under
 *   the read (held-files.ts), as for any live file.
 *
 * A path not yet settled is `holding`: the watch's full scans leave it
 * unstamped, so no half-written version reaches the server by that road.
 * A file that changes while the scan reads it is not recorded at all
 * (scan/read-state.ts): its next event brings it here again.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { nowMs } from "../common/clock.ts";
import { trace } from "../common/trace.ts";
import { diskKind, statKey } from "../scan/stat-key.ts";

/** Quiet time that ends a burst of file events. */
const QUIET_MS = 5;
/** A burst that goes on longer is sent in parts this far apart. */
const MAX_BURST_MS = 250;
/** The quiet one save needs, and how long its events may span (its own size and stat unchanged meanwhile). */
const SAVE_QUIET_MS = 10;
/** A size that is a whole number of these is where a buffered writer's flush leaves a file part way. */
const WRITER_BLOCK_BYTES = 4096;
/** The quiet such a file needs, at least. */
const BLOCK_QUIET_MS = 100;
/** A file this large (one chunk) may be a copy under way, whatever its streak says. */
const LARGE_BYTES = 1024 * 1024;
/** The quiet such a file needs, at least. */
const LARGE_QUIET_MS = 500;
/** The quiet a file being written needs, at least. */
const WRITING_QUIET_MS = 1000;
/** Default `windowMs`: how long a file that was being written must then be left alone. */
export const SETTLE_MS = 2000;
/** Default `maxMs`: a file written for longer is sent anyway. */
export const MAX_SETTLE_MS = 60_000;

export interface SettleOptions {
  readonly windowMs?: number;
  readonly maxMs?: number;
}

interface Streak {
  start: number;
  last: number;
  /** The file's fingerprint at the last event ("" when no file is there). */
  stat: string;
  size: number;
}

export class Settler {
  private readonly touched = new Set<string>();
  /** Streaks in order of their last event (re-inserted on each), so expired ones are pruned from the front. */
  private readonly streaks = new Map<string, Streak>();
  private readonly held = new Set<string>();
  private burst: NodeJS.Timeout | null = null;
  private burstStarted = 0;
  private heldTimer: NodeJS.Timeout | null = null;
  private readonly windowMs: number;
  private readonly maxMs: number;

  constructor(
    private readonly root: string,
    /** Called with the paths ready to stamp and send. */
    private readonly ready: (paths: string[]) => void,
    options: SettleOptions = {},
  ) {
    this.windowMs = Math.max(0, options.windowMs ?? SETTLE_MS);
    this.maxMs = Math.max(this.windowMs, options.maxMs ?? MAX_SETTLE_MS);
  }

  /** A file event named `rel` (root-relative). */
  changed(rel: string): void {
    const now = nowMs();
    if (this.windowMs > 0) {
      const streak = this.streaks.get(rel);
      const seen = this.statOf(rel);
      const going = streak !== undefined && now - streak.last < this.windowMs;
      // Another event of a change already seen (a save makes two or three, chokidar's own comes after
      // its stat, late under load): the file has not moved since, and its quiet goes on.
      if (!(going && seen.stat === streak.stat)) {
        this.streaks.delete(rel);
        const start = going ? streak.start : now;
        // Only a file is ever half-written: a directory, a symlink or a deletion goes with its burst.
        if (seen.stat !== "") this.streaks.set(rel, { start, last: now, ...seen });
      }
    }
    if (this.touched.size === 0) {
      this.burstStarted = now;
      trace(() => `watch: first event of a burst (${rel})`);
    }
    this.touched.add(rel);
    if (this.burst) clearTimeout(this.burst);
    this.burst = setTimeout(() => this.flush(), now - this.burstStarted >= MAX_BURST_MS ? 0 : QUIET_MS);
  }

  /** True while `rel` is a file still settling: a full scan leaves it for later. */
  holding(rel: string): boolean {
    return this.held.has(rel) || (this.touched.has(rel) && !this.settled(rel, nowMs(), false));
  }

  stop(): void {
    if (this.burst) clearTimeout(this.burst);
    if (this.heldTimer) clearTimeout(this.heldTimer);
    this.burst = null;
    this.heldTimer = null;
  }

  private flush(): void {
    this.burst = null;
    const now = nowMs();
    this.prune(now);
    const paths = [...this.touched, ...this.held];
    this.touched.clear();
    this.held.clear();
    const out: string[] = [];
    for (const p of paths) {
      if (this.settled(p, now, true)) out.push(p);
      else this.held.add(p);
    }
    trace(() => `watch: burst settled, ${out.length} paths${this.held.size > 0 ? `, ${this.held.size} settling` : ""}`);
    if (out.length > 0) this.ready(out);
    this.scheduleHeld(now);
  }

  /**
   * Settled: quiet for as long as neededQuiet says, its fingerprint
   * unchanged since its last event; or past `maxMs`.
   * `deciding`: the answer is acted on (a stat that moved restarts the quiet,
   * a path past its maximum starts a new streak).
   */
  private settled(rel: string, now: number, deciding: boolean): boolean {
    const streak = this.streaks.get(rel);
    if (!streak) return true;
    if (now - streak.start >= this.maxMs) {
      if (deciding) {
        trace(() => `watch: ${rel} still changing after ${now - streak.start} ms: sent as it is`);
        streak.start = now;
      }
      return true;
    }
    const needed = this.neededQuiet(streak);
    if (now - streak.last < needed) return false;
    if (this.windowMs === 0) return true;
    const seen = this.statOf(rel);
    if (seen.stat === streak.stat) return true;
    // Written without an event reaching us (or between two): the quiet starts again.
    if (deciding) {
      this.streaks.delete(rel);
      this.streaks.set(rel, { ...streak, last: now, ...seen });
    }
    return false;
  }

  private neededQuiet(streak: Streak): number {
    const lasted = streak.last - streak.start;
    // An empty file is one a writer has opened, most likely: it is waited for as one being written.
    if (lasted < SAVE_QUIET_MS && streak.size > 0) {
      return Math.min(this.windowMs, saveQuiet(streak.size));
    }
    return Math.min(this.windowMs, Math.max(WRITING_QUIET_MS, 2 * lasted));
  }

  private scheduleHeld(now: number): void {
    if (this.heldTimer) clearTimeout(this.heldTimer);
    this.heldTimer = null;
    let next = Number.POSITIVE_INFINITY;
    for (const p of this.held) {
      const s = this.streaks.get(p);
      if (!s) continue;
      const quietAt = s.last + this.neededQuiet(s);
      next = Math.min(next, quietAt, s.start + this.maxMs);
    }
    if (next === Number.POSITIVE_INFINITY) return;
    this.heldTimer = setTimeout(
      () => {
        this.heldTimer = null;
        if (!this.burst) this.flush();
      },
      Math.max(QUIET_MS, next - now),
    );
  }

  /** Forgets streaks over for longer than the window (and not held): the map stays as small as the recent paths. */
  private prune(now: number): void {
    for (const [p, s] of this.streaks) {
      if (now - s.last < this.windowMs) break;
      if (!this.held.has(p) && !this.touched.has(p)) this.streaks.delete(p);
    }
  }

  private statOf(rel: string): { stat: string; size: number } {
    try {
      const st = lstatSync(join(this.root, rel), { bigint: true });
      if (diskKind(st) === "file") return { stat: statKey(st) ?? "", size: Number(st.size) };
    } catch {
      // Gone or unreadable: no file to wait for; the scan reports what it finds.
    }
    return { stat: "", size: 0 };
  }
}

/** The quiet a file that looks saved at once needs, by its size. */
function saveQuiet(size: number): number {
  if (size >= LARGE_BYTES) return LARGE_QUIET_MS;
  // A save ends anywhere; a writer's flush (stdio's 4 KiB, Python's 8 KiB, a copy's 128 KiB) on a block.
  if (size % WRITER_BLOCK_BYTES === 0) return BLOCK_QUIET_MS;
  return SAVE_QUIET_MS;
}
