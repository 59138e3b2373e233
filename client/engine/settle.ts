/**
 * When a watch (watch.ts) sends the paths its file events named: once a
 * burst of events is over, and for a file still being written, once it has
 * settled.
 *
 * - A burst ends when the tree is quiet for QUIET_MS, or is cut after
 *   MAX_BURST_MS (an install writing thousands of files is sent in parts).
 * - A path's own streak is its events, each within `windowMs` of the last.
 *   A path is settled once it has been quiet for as long as its streak has
 *   lasted, at most `windowMs`, and its size and mtime are what they were
 *   at its last event. One save (its events within a millisecond or two)
 *   goes with its burst, at once; a file written for 3 s waits for
 *   `windowMs` of quiet; 100 appends in 10 s make two or three revs, not 100.
 * - A file of LARGE_BYTES or more waits for LARGE_QUIET_MS of quiet even
 *   after one burst: a copy of a large file stalls for a few ms now and then
 *   (the disk), and its first megabytes would otherwise go alone.
 * - A streak that goes on past `maxMs` is sent anyway (a log, a live
 *   database): the push reads it as it is, and holds it if it changes under
 *   the read (held-files.ts), as for any live file.
 *
 * A path not yet settled is `holding`: the watch's full scans leave it
 * unstamped, so no half-written version reaches the server by that road.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { nowMs } from "../common/clock.ts";
import { trace } from "../common/trace.ts";

/** Quiet time that ends a burst of file events. */
const QUIET_MS = 5;
/** A burst that goes on longer is sent in parts this far apart. */
const MAX_BURST_MS = 250;
/** A file this large (one chunk) may be a copy under way, whatever its streak says. */
const LARGE_BYTES = 1024 * 1024;
/** The quiet such a file needs, at least. */
const LARGE_QUIET_MS = 500;
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
  /** Size and mtime at the last event ("" when no file is there). */
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
      this.streaks.delete(rel);
      const seen = this.statOf(rel);
      const start = streak && now - streak.last < this.windowMs ? streak.start : now;
      // Only a file is ever half-written: a directory, a symlink or a deletion goes with its burst.
      if (seen.stat !== "") this.streaks.set(rel, { start, last: now, ...seen });
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
   * Settled: quiet for as long as its streak lasted (at most the window),
   * its size and mtime unchanged since its last event; or past `maxMs`.
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
    if (needed === 0) return true;
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
    const floor = streak.size >= LARGE_BYTES ? LARGE_QUIET_MS : 0;
    return Math.min(this.windowMs, Math.max(floor, streak.last - streak.start));
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
      if (st.isFile()) return { stat: `${st.size}:${st.mtimeNs}`, size: Number(st.size) };
    } catch {
      // Gone or unreadable: no file to wait for; the scan reports what it finds.
    }
    return { stat: "", size: 0 };
  }
}
