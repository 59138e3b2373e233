/**
 * The watch's queue of syncs (watch.ts): one at a time, each folding in what
 * arrived meanwhile, with the turns of other operations between them; a
 * server that cannot be reached is waited for and reported once.
 */

import { wholeRevsThrough } from "../../protocol/cursor.ts";
import { nowMs } from "../common/clock.ts";
import { trace } from "../common/trace.ts";
import { DeletionHold } from "./deletion-hold.ts";
import type { SyncReport } from "./report.ts";
import type { SyncEngine } from "./sync.ts";
import type { Turns, WatchOptions } from "./watch.ts";
import { isFinal, isUnreachable, pause } from "./watch-failures.ts";

/** Quiet after local events before the whole tree is scanned once. */
const QUIET_SCAN_MS = 1000;
/** How long the first sync waits before trying an unreachable server again. */
const FIRST_RETRY_MS = 1000;

/** Runs one sync at a time, folding every request that arrives meanwhile into the next. */
export class SyncQueue implements Turns {
  private readonly paths = new Set<string>();
  /** Operations waiting for their turn (turn()), run in order, each alone. */
  private readonly turns: (() => Promise<void>)[] = [];
  /** The first sync has begun: until then the drain leaves the engine to it. */
  private started = false;
  /** A sync is owed whatever the paths stamp: a poke, the poll, a reconnect. */
  private owed = false;
  /** The next sync scans the whole tree first. */
  private scan = false;
  /** The newest server rev this host has pulled through: older pokes are stale. */
  private seenRev = 0;
  private running: Promise<void> | null = null;
  private quiet: NodeJS.Timeout | null = null;
  /** When the last full scan ended, and the CPU time its sync took (waits for the server are not a cost). */
  private lastScanAt = 0;
  private lastScanCpuMs = 0;
  /** Files still being written (settle.ts): stamped by no scan of this watch until they settle. */
  unsettled: (path: string) => boolean = () => false;
  /** Rejects with the first refusal that ends the watch (isFinal). */
  readonly refused: Promise<never>;
  private reject: (e: unknown) => void = () => {};
  /** A refusal ended the watch: its own syncs stop (turns asked for still run, and fail alike). */
  private ended = false;
  /** Deletions heard on disk, which hold the own syncs until they settle. */
  private readonly deletions = new DeletionHold();
  private settling: NodeJS.Timeout | null = null;

  constructor(
    private readonly engine: SyncEngine,
    private readonly options: WatchOptions,
  ) {
    this.refused = new Promise<never>((_, reject) => {
      this.reject = reject;
    });
  }

  private refuse(e: unknown): void {
    this.ended = true;
    this.reject(e);
  }

  /** A path was deleted on disk: the next own sync waits for deletions to settle (deletion-hold.ts). */
  deleted(): void {
    this.deletions.heard();
  }

  touched(paths: readonly string[]): void {
    for (const p of paths) this.paths.add(p);
    this.kick();
  }

  poked(rev: number): void {
    if (rev <= this.seenRev) return;
    this.owed = true;
    this.kick();
  }

  request(scan = false): void {
    this.owed = true;
    this.scan ||= scan;
    this.kick();
  }

  turn<T>(operation: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.turns.push(async () => {
        try {
          resolve(await operation());
        } catch (e) {
          reject(e);
        } finally {
          this.seenRev = Math.max(this.seenRev, this.pulledThrough());
        }
      });
      this.kick();
    });
  }

  /**
   * The first sync (a full scan), before any other. A server that cannot be
   * reached is waited for, as a running watch does (reported once); any
   * other failure is the caller's. Null: the watch was stopped meanwhile.
   */
  async first(): Promise<SyncReport | null> {
    for (;;) {
      try {
        const report = await this.firstOnce();
        this.reached();
        return report;
      } catch (e) {
        // Stopped mid-sync: the sync was cancelled, which is no failure.
        if (this.options.signal?.aborted) return null;
        if (!isUnreachable(e)) throw e;
        this.unreachable(e);
      }
      await pause(FIRST_RETRY_MS, this.options.signal);
      if (this.options.signal?.aborted) return null;
    }
  }

  private get pushes(): boolean {
    return this.options.pushes ?? true;
  }

  /** Local paths a pull-only watch has kept local: each reported once. */
  private readonly unpushed = new Set<string>();

  private noteUnpushed(): void {
    if (this.pushes) return;
    const { acked } = this.engine.store.position();
    const fresh = this.engine.store
      .pending(acked.rev, 1000)
      .map((r) => r.entry.path)
      .filter((p) => !this.unpushed.has(p));
    for (const p of fresh) this.unpushed.add(p);
    if (fresh.length > 0) this.options.onUnpushed?.(fresh);
  }

  /** Whether the last sync failed to reach the server (it was reported once). */
  private unreached = false;

  private unreachable(e: unknown): void {
    if (!this.unreached) this.options.onError?.(e);
    this.unreached = true;
  }

  private reached(): void {
    if (this.unreached) this.options.onReachable?.();
    this.unreached = false;
  }

  private async firstOnce(): Promise<SyncReport> {
    this.started = true;
    // A turn asked for while the watcher got ready runs first; the first sync
    // waits for it, and starts in the same tick as it finds the engine free.
    while (this.running) await this.running;
    const first = this.engine.sync({
      push: this.pushes,
      signal: this.options.signal,
      allowMassDelete: this.options.allowMassDelete === true,
    });
    // Requests arriving meanwhile wait for it (kick() sees it running), then run;
    // after a failed one only turns do, until a first sync succeeds.
    this.running = first.then(
      () => this.afterFirst(),
      () => {
        this.started = false;
        this.afterFirst();
      },
    );
    const report = await first;
    this.seenRev = Math.max(this.seenRev, this.pulledThrough());
    this.noteUnpushed();
    return report;
  }

  private afterFirst(): void {
    this.running = null;
    if (this.paths.size > 0 || this.owed || this.turns.length > 0) this.kick();
  }

  /**
   * Local events happened: once they stop for QUIET_SCAN_MS, scan the whole
   * tree, unless the last full scan was so recent that scanning again would
   * take more than a twentieth of the time (a huge tree under steady writes).
   */
  quietScan(): void {
    if (this.quiet) clearTimeout(this.quiet);
    const due = Math.max(QUIET_SCAN_MS, this.lastScanAt + 20 * this.lastScanCpuMs - nowMs());
    this.quiet = setTimeout(() => {
      this.quiet = null;
      this.request(true);
    }, due);
  }

  /**
   * The server rev through which the saved pull cursor has every change. Not
   * the sync's last known rev: a push that wrote nothing learns the head
   * without pulling it, and a poke for that rev arriving after the sync
   * must still start one.
   */
  private pulledThrough(): number {
    const cursor = this.engine.store.position().pull?.cursor;
    return cursor ? wholeRevsThrough(cursor) : 0;
  }

  stop(): void {
    if (this.quiet) clearTimeout(this.quiet);
    this.quiet = null;
    if (this.settling) clearTimeout(this.settling);
    this.settling = null;
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private kick(): void {
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  private async drain(): Promise<void> {
    while (this.paths.size > 0 || this.owed || this.turns.length > 0) {
      const turn = this.turns.shift();
      if (turn) {
        trace(() => "watch: turn begins");
        await turn();
        trace(() => "watch: turn ends");
        continue;
      }
      // Before the first sync only turns run: it scans the whole tree anyway; after a refusal, nothing else.
      if (!this.started || this.ended) break;
      const paths = [...this.paths];
      this.paths.clear();
      let stamped = 0;
      trace(() => `watch: own sync stamps ${paths.length} paths`);
      try {
        stamped = paths.length > 0 ? this.engine.stampPaths(paths, this.unsettled) : 0;
      } catch (e) {
        if (isFinal(e)) {
          this.refuse(e);
          continue;
        }
        this.options.onError?.(e);
      }
      if (stamped === 0 && !this.owed) continue;
      const settling = this.deletions.waitMs();
      if (settling > 0) {
        // What was stamped stays pending; this sync is owed once the deletions settle.
        this.owed = true;
        this.settling ??= setTimeout(() => {
          this.settling = null;
          this.kick();
        }, settling);
        break;
      }
      const scan = this.scan;
      this.owed = false;
      this.scan = false;
      try {
        const cpu = process.cpuUsage();
        trace(() => `watch: own sync begins (${stamped} stamped, scan ${scan})`);
        const report = await this.engine.sync({
          scan,
          unsettled: this.unsettled,
          push: this.pushes,
          signal: this.options.signal,
          allowMassDelete: this.options.allowMassDelete === true,
        });
        this.noteUnpushed();
        trace(() => `watch: own sync ends, ${report.roundTrips} round trips, ${report.entriesSent} sent`);
        this.seenRev = Math.max(this.seenRev, this.pulledThrough());
        if (scan) {
          this.lastScanAt = nowMs();
          const used = process.cpuUsage(cpu);
          this.lastScanCpuMs = (used.user + used.system) / 1000;
        }
        this.reached();
        if (report.entriesSent + report.entriesReceived > 0) this.options.onReport?.(report);
      } catch (e) {
        // What was stamped stays pending in the store: the next sync (a poll or a reconnect) sends it.
        if (this.options.signal?.aborted) break; // cancelled by the watch's end
        if (isFinal(e)) this.refuse(e);
        else if (isUnreachable(e)) this.unreachable(e);
        else this.options.onError?.(e);
      }
    }
  }
}
