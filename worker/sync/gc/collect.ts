/**
 * One garbage collection of a workspace, in slices (PROTOCOL.md §7.9):
 *
 *   entries → versions → sweep → packs → gather → rewrite → done
 *
 * Each `step()` is one bounded slice in one transaction (SLICE_ROWS rows
 * read, or SLICE_PACKS packs rewritten), so a push waits at most one slice;
 * the object's alarm runs slices and yields between them (worker/do/
 * collector.ts). The marks live in memory for the run: an object evicted
 * mid-run loses them and the next alarm starts a new run, so no slice ever
 * trusts marks it did not see built.
 *
 * Never deleting what a concurrent push references: a push that commits
 * while the run is marking or sweeping reports every chunk it names through
 * `referenced` before its transaction ends (worker/sync/push.ts), so the
 * sweep keeps it. Objects uploaded after the run started are inside the
 * grace. An object swept before a push names it makes that push fail
 * `missing_objects` in its own transaction; the host uploads it again.
 */

import type { SyncContext } from "../db.ts";
import { readCurrentRev } from "../history.ts";
import { MeteredDb } from "../metered-db.ts";
import type { Retention } from "../retention.ts";
import { classifyPacks, gatherMembers, type Member, rewritePacks } from "./compact.ts";
import { revCutBefore, revTime } from "./cuts.ts";
import { markEntries, markVersions, type VersionKey } from "./mark.ts";
import { HashMarks } from "./marks.ts";
import { emptyFreed, type Freed, type LastCollection, readCollectorRecord, writeCollectorRecord } from "./summary.ts";
import { sweepObjects } from "./sweep.ts";

/** Rows one slice reads from entries, versions or objects. */
export const SLICE_ROWS = 2000;
/** Sparse packs one slice rewrites (at most this many MiB read and written). */
export const SLICE_PACKS = 8;

type Phase = "entries" | "versions" | "sweep" | "packs" | "gather" | "rewrite" | "done";

export class CollectionRun {
  readonly marks = new HashMarks();
  readonly freed: Freed = emptyFreed();
  private readonly db: MeteredDb;
  private phase: Phase = "entries";
  private pathCursor: string | null = null;
  private versionCursor: VersionKey | null = null;
  private hashCursor: Uint8Array | null = null;
  private packCursor = 0;
  private readonly live = new Map<number, number>();
  private readonly sparse = new Map<number, number>();
  private members: Member[] = [];
  private oldestTombstone: number | null = null;
  private oldestVersion: number | null = null;
  private oldestGrace: number | null = null;

  private constructor(
    private readonly ctx: SyncContext,
    private readonly retention: Retention,
    readonly startedAt: number,
    private readonly rev: number,
    private readonly lastPack: number,
    readonly historyCut: number,
    private readonly horizonCut: number,
    private readonly sliceRows: number,
  ) {
    this.db = new MeteredDb(ctx.db);
  }

  /** Starts a run at the context's now: fixes its cuts and records that it is running. */
  static start(ctx: SyncContext, retention: Retention, sliceRows = SLICE_ROWS): CollectionRun {
    const now = ctx.now();
    return ctx.db.transaction(() => {
      const rev = readCurrentRev(ctx.db);
      const lastPack = ctx.db.exec<{ id: number | null }>(`SELECT max(id) AS id FROM packs`).rows[0]?.id ?? 0;
      const run = new CollectionRun(
        ctx,
        retention,
        now,
        rev,
        lastPack,
        revCutBefore(ctx.db, now - retention.historyMs, rev),
        revCutBefore(ctx.db, now - retention.horizonMs, rev),
        sliceRows,
      );
      const record = readCollectorRecord(ctx.db);
      const historyCut = Math.max(record.historyCut ?? 0, run.historyCut);
      writeCollectorRecord(ctx.db, { ...record, running: now, historyCut });
      return run;
    });
  }

  get done(): boolean {
    return this.phase === "done";
  }

  /** Marks the chunks a push names (called inside its transaction, after it applied). */
  referenced(chunks: Iterable<Uint8Array>): void {
    for (const hash of chunks) this.marks.add(hash);
  }

  /** Runs one slice in one transaction; the last one records the run. */
  step(): void {
    if (this.phase === "done") return;
    this.db.transaction(() => this.slice());
    this.freed.slices++;
    this.freed.rowsRead = this.db.meter.rowsRead;
    this.freed.rowsWritten = this.db.meter.rowsWritten;
  }

  private slice(): void {
    const { db } = this;
    switch (this.phase) {
      case "entries": {
        const s = markEntries(db, this.marks, this.pathCursor, this.sliceRows, this.horizonCut);
        this.freed.tombstones += s.dropped;
        this.oldestTombstone = older(this.oldestTombstone, s.oldestKept);
        this.pathCursor = s.next;
        if (s.next === null) this.phase = "versions";
        return;
      }
      case "versions": {
        const s = markVersions(db, this.marks, this.versionCursor, this.sliceRows, this.historyCut);
        this.freed.versions += s.dropped;
        this.oldestVersion = older(this.oldestVersion, s.oldestKept);
        this.versionCursor = s.nextKey;
        if (s.nextKey === null) this.phase = "sweep";
        return;
      }
      case "sweep": {
        const graceBefore = this.startedAt - this.retention.graceMs;
        const s = sweepObjects(db, this.marks, this.hashCursor, this.sliceRows, graceBefore, this.lastPack, this.live);
        this.freed.objects += s.deleted;
        this.freed.objectBytes += s.deletedBytes;
        this.freed.storedBytes += s.inlineBytes;
        this.oldestGrace = older(this.oldestGrace, s.oldestGrace);
        this.hashCursor = s.next;
        if (s.next === null) this.phase = "packs";
        return;
      }
      case "packs": {
        const s = classifyPacks(db, this.packCursor, this.sliceRows, this.lastPack, this.live, this.sparse);
        this.freed.packsDeleted += s.deleted;
        this.freed.storedBytes += s.deletedBytes;
        if (s.next !== null) this.packCursor = s.next;
        else this.phase = this.sparse.size > 0 ? "gather" : "done";
        break;
      }
      case "gather": {
        this.hashCursor = gatherMembers(db, this.hashCursor, this.sliceRows, this.sparse, this.members);
        if (this.hashCursor === null) {
          this.members.sort((a, b) => a.pack - b.pack || a.offset - b.offset);
          this.phase = "rewrite";
        }
        return;
      }
      case "rewrite": {
        const batch = takePacks(this.members, SLICE_PACKS);
        const oldBytes = [...new Set(batch.map((m) => m.pack))].reduce((n, p) => n + (this.sparse.get(p) ?? 0), 0);
        const written = rewritePacks(db, batch);
        this.members = this.members.slice(batch.length);
        this.freed.packsRewritten += new Set(batch.map((m) => m.pack)).size;
        this.freed.storedBytes += oldBytes - written;
        if (this.members.length === 0) this.phase = "done";
        break;
      }
    }
    if (this.phase === "done") this.finish();
  }

  /** Records the run (inside the last slice's transaction) with when the next one is due. */
  private finish(): void {
    const { db } = this;
    const due = [
      dueAt(db, this.oldestVersion, this.retention.historyMs),
      dueAt(db, this.oldestTombstone, this.retention.horizonMs),
      this.oldestGrace === null ? null : this.oldestGrace + this.retention.graceMs,
    ].filter((t): t is number => t !== null);
    const last: LastCollection = {
      startedAt: this.startedAt,
      endedAt: this.ctx.now(),
      rev: this.rev,
      lastPack: this.lastPack,
      nextDueAt: due.length > 0 ? Math.min(...due) : null,
      freed: { ...this.freed, slices: this.freed.slices + 1 },
    };
    writeCollectorRecord(db, { ...readCollectorRecord(db), last, running: null });
  }
}

/** The members of the first `count` packs of `members` (sorted by pack). */
function takePacks(members: readonly Member[], count: number): Member[] {
  let packs = 0;
  let end = 0;
  for (; end < members.length; end++) {
    if (end === 0 || (members[end] as Member).pack !== (members[end - 1] as Member).pack) {
      if (packs === count) break;
      packs++;
    }
  }
  return members.slice(0, end);
}

function older(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}

/** When something kept because `rev` is recent expires: rev's time plus the window. */
function dueAt(db: MeteredDb, rev: number | null, windowMs: number): number | null {
  if (rev === null) return null;
  const at = revTime(db, rev);
  return at === null ? null : at + windowMs;
}
