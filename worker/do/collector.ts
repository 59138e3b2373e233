/**
 * Garbage collection on the object's alarm (scheduler.ts): when a
 * collection is due it runs it slice by slice (worker/sync/gc/collect.ts),
 * yielding to other events between slices, up to SLICES_PER_ALARM slices a
 * wake, then asks to be woken again at once. A collection is due
 * COLLECT_AFTER_WRITE_MS after a write, or when something it kept expires
 * (the last run's `nextDueAt`); an idle workspace with nothing to expire is
 * never woken.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import type { SyncContext } from "../sync/db.ts";
import { CollectionRun } from "../sync/gc/collect.ts";
import { anyCondemned, r2PacksHolding, revivePacks } from "../sync/gc/revive.ts";
import { type LastCollection, readCollectorRecord } from "../sync/gc/summary.ts";
import { readCurrentRev } from "../sync/history.ts";
import type { Retention } from "../sync/retention.ts";
import type { AlarmTask, Scheduler } from "./scheduler.ts";

/** How long after a write a collection runs; at most one per this interval for a busy workspace. */
export const COLLECT_AFTER_WRITE_MS = 60 * 60 * 1000;
/** Slices one alarm runs before handing the alarm back (the rest run at the next wake, at once). */
export const SLICES_PER_ALARM = 64;

export class Collector implements AlarmTask {
  private run: CollectionRun | null = null;
  /** A write since the object started asked for a collection by then (in memory; the record covers eviction). */
  private wanted: number | null = null;
  private scheduled = false;

  constructor(
    private readonly sync: SyncContext,
    private readonly retention: () => Retention | ProtocolError,
    private readonly scheduler: Scheduler,
  ) {
    scheduler.add(this);
  }

  /**
   * SyncContext.onWrite: runs inside the write's transaction, so it only
   * marks and notes, and brings back the condemned packs in R2 the write
   * names (revive.ts), before anything could delete them.
   */
  onWrite(referenced: Iterable<Uint8Array>): void {
    const hashes = [...referenced];
    const run = this.run;
    if (run !== null) run.referenced(hashes);
    if (hashes.length > 0 && (run?.judgesPacks === true || anyCondemned(this.sync.db))) {
      const packs = r2PacksHolding(this.sync.db, hashes);
      revivePacks(this.sync.db, packs);
      run?.touch(packs);
    }
    if (this.wanted === null) {
      this.wanted = this.sync.now() + COLLECT_AFTER_WRITE_MS;
      this.scheduled = false;
    }
  }

  /** After a call that may have written: sets the alarm a write asked for (once per write burst). */
  async schedule(): Promise<void> {
    if (this.wanted === null || this.scheduled) return;
    this.scheduled = true;
    await this.scheduler.wakeBy(this.wanted);
  }

  async onAlarm(now: number): Promise<number | null> {
    // A workspace never written (its alarm is a socket's token expiry) holds nothing to collect.
    if (this.sync.creation?.created === false) return null;
    if (this.run === null && this.isDue(now)) {
      const retention = this.retention();
      if (retention instanceof ProtocolError) {
        // Misconfigured: collect nothing rather than with a guessed setting (retention.ts).
        console.error(`ferry: collection skipped: ${retention.message}`);
        return null;
      }
      this.begin(retention);
    }
    const run = this.run;
    if (run !== null) {
      for (let i = 0; i < SLICES_PER_ALARM && !run.done; i++) {
        await this.step();
        await yieldToEvents();
      }
      if (!run.done) return now;
    }
    return this.nextWake(now);
  }

  /**
   * Runs a whole collection now, or finishes the one running (the admin
   * action, PROTOCOL.md §7.10). Yields between slices like the alarm does.
   */
  async collectNow(retention: Retention, now: () => number = this.sync.now): Promise<LastCollection> {
    const run = this.run ?? this.begin(retention, now);
    while (!run.done) {
      // A slice that failed (here or on the alarm) drops the run: report it rather than wait for it.
      if (this.run !== run) throw new Error("the collection was abandoned after a failed slice");
      await this.step();
      await yieldToEvents();
    }
    const last = readCollectorRecord(this.sync.db).last;
    // The run's last slice wrote the record.
    if (last === null) throw new Error("a finished collection left no record");
    return last;
  }

  /**
   * Starts a run and leaves it to `step` (tests that interleave pushes with
   * slices); `sliceRows` makes slices smaller than the default.
   */
  start(retention: Retention, now: () => number = this.sync.now, sliceRows?: number): void {
    this.begin(retention, now, sliceRows);
  }

  /** One slice of the run in progress; true once it is done (or when none runs). */
  async step(): Promise<boolean> {
    const run = this.run;
    if (run === null) return true;
    try {
      await run.step();
    } catch (e) {
      // The slice rolled back. A run whose slice broke an invariant is not
      // trusted again: `meta.gc.running` stays set, so the next alarm starts afresh.
      if (this.run === run) this.run = null;
      throw e;
    }
    if (run.done && this.run === run) this.run = null;
    return run.done;
  }

  /** Forgets a run in progress (the workspace's storage was deleted). */
  reset(): void {
    this.run?.abandon();
    this.run = null;
    this.wanted = null;
    this.scheduled = false;
  }

  /** `now` is the run's clock: tests and the admin action may collect as of another time. */
  private begin(retention: Retention, now: () => number = this.sync.now, sliceRows?: number): CollectionRun {
    this.wanted = null;
    this.scheduled = false;
    this.run = CollectionRun.start({ ...this.sync, now }, retention, sliceRows);
    return this.run;
  }

  private isDue(now: number): boolean {
    const { last, running } = readCollectorRecord(this.sync.db);
    // A run the object was evicted during starts again.
    if (running !== null) return true;
    if (this.wanted !== null && this.wanted <= now) return true;
    if (last !== null && last.nextDueAt !== null && last.nextDueAt <= now) return true;
    return this.wrote(last) && this.quietSince(last) + COLLECT_AFTER_WRITE_MS <= now;
  }

  /** When the last collection ended, or for a workspace never collected, when its first rev committed. */
  private quietSince(last: LastCollection | null): number {
    if (last !== null) return last.endedAt;
    return this.sync.db.exec<{ at: number }>(`SELECT at FROM revs ORDER BY rev LIMIT 1`).rows[0]?.at ?? 0;
  }

  private nextWake(now: number): number | null {
    const { last } = readCollectorRecord(this.sync.db);
    const times: number[] = [];
    if (this.wanted !== null) times.push(this.wanted);
    if (last?.nextDueAt != null) times.push(last.nextDueAt);
    if (this.wrote(last)) times.push(Math.max(now, this.quietSince(last) + COLLECT_AFTER_WRITE_MS));
    return times.length > 0 ? Math.min(...times) : null;
  }

  /** Whether anything was written since `last` started (a push took a rev, or an upload wrote a pack). */
  private wrote(last: LastCollection | null): boolean {
    const db = this.sync.db;
    const lastPack = db.exec<{ id: number | null }>(`SELECT max(id) AS id FROM packs`).rows[0]?.id ?? 0;
    return readCurrentRev(db) > (last?.rev ?? 0) || lastPack > (last?.lastPack ?? 0);
  }
}

/** Lets requests that arrived during a slice run before the next one. */
function yieldToEvents(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
