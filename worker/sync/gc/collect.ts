/**
 * One garbage collection of a workspace, in slices (PROTOCOL.md §7.9):
 *
 *   entries → versions → sweep → packs → gather → rewrite → orphans → drop → done
 *
 * Each `step()` is one bounded slice: SLICE_ROWS rows read in one
 * transaction, or one batch of packs rewritten, one page of the R2 listing,
 * one batch of R2 deletes, each of those ending in one transaction. A push
 * waits at most one transaction; the object's alarm runs slices and yields
 * between them (worker/do/collector.ts). The marks live in memory for the
 * run: an object evicted mid-run loses them and the next alarm starts a new
 * run, so no slice ever trusts marks it did not see built.
 *
 * Never deleting what a concurrent write references: a push that commits
 * while the run is marking or sweeping reports every chunk it names through
 * `referenced` before its transaction ends (worker/sync/push.ts), so the
 * sweep keeps it, and the packs in R2 that hold them are `touched`: the run
 * condemns none of them. Objects uploaded after the run started are inside
 * the grace. An object swept before a push names it makes that push fail
 * `missing_objects` in its own transaction; the host uploads it again.
 *
 * With packs in R2 (`ctx.packStore`), the rewrite, the listing and the
 * deletes await R2 between transactions; a run whose workspace is deleted
 * meanwhile is `abandon`ed and records nothing more.
 */
import type { SyncContext } from "../db.ts";
import { readCurrentRev } from "../history.ts";
import { MeteredDb } from "../metered-db.ts";
import type { Retention } from "../retention.ts";
import { classifyPacks, MOVE_TO_R2_BYTES, type PackJudging } from "./classify.ts";
import { gatherMembers, type Member, rewriteSqliteBatch } from "./compact.ts";
import { older, revCutBefore } from "./cuts.ts";
import { markEntries, markVersions, type VersionKey } from "./mark.ts";
import { HashMarks } from "./marks.ts";
import { deleteQueued, pruneDeleted } from "./r2-deletes.ts";
import { listOrphans } from "./r2-orphans.ts";
import { revivePacks } from "./revive.ts";
import { rewriteIntoR2, takeBatch } from "./rewrite-r2.ts";
import { recordRunEnd } from "./run-record.ts";
import { emptyFreed, type Freed, readCollectorRecord, writeCollectorRecord } from "./summary.ts";
import { sweepObjects } from "./sweep.ts";

/** Rows one slice reads from entries, versions or objects. */
export const SLICE_ROWS = 2000;
/** Sparse SQLite packs one slice rewrites into SQLite (at most this many MiB read and written). */
export const SLICE_PACKS = 8;

type Phase = "entries" | "versions" | "sweep" | "packs" | "gather" | "rewrite" | "orphans" | "drop" | "done";

export class CollectionRun {
  readonly marks = new HashMarks();
  readonly freed: Freed = emptyFreed();
  private readonly db: MeteredDb;
  private phase: Phase = "entries";
  private pathCursor: string | null = null;
  private versionCursor: VersionKey | null = null;
  private hashCursor: Uint8Array | null = null;
  private packCursor = 0;
  private listCursor: string | null = null;
  private readonly live = new Map<number, number>();
  private readonly sparse = new Map<number, number>();
  /** Packs in R2 a write named since the run started: never condemned by it. */
  private readonly touched = new Set<number>();
  private members: Member[] = [];
  private oldestTombstone: number | null = null;
  private oldestVersion: number | null = null;
  private oldestGrace: number | null = null;
  /** SQLite pack bytes this run may still move to R2 (classify.ts). */
  private readonly move = { budget: MOVE_TO_R2_BYTES };
  /** Whether this run listed the whole R2 prefix (finish records when). */
  private listed = false;
  private stepping: Promise<void> | null = null;
  private abandoned = false;

  private constructor(
    private readonly ctx: SyncContext,
    private readonly retention: Retention,
    readonly startedAt: number,
    private readonly rev: number,
    private readonly lastPack: number,
    readonly historyCut: number,
    private readonly horizonCut: number,
    private readonly sliceRows: number,
    /** When the last listing of the R2 prefix ended: one runs once a pack grace. */
    private readonly listedAt: number | null,
  ) {
    this.db = new MeteredDb(ctx.db);
  }

  /** Starts a run at the context's now: fixes its cuts and records that it is running. */
  static start(ctx: SyncContext, retention: Retention, sliceRows = SLICE_ROWS): CollectionRun {
    const now = ctx.now();
    return ctx.db.transaction(() => {
      const rev = readCurrentRev(ctx.db);
      const lastPack = ctx.db.exec<{ id: number | null }>(`SELECT max(id) AS id FROM packs`).rows[0]?.id ?? 0;
      const record = readCollectorRecord(ctx.db);
      const run = new CollectionRun(
        ctx,
        retention,
        now,
        rev,
        lastPack,
        revCutBefore(ctx.db, now - retention.historyMs, rev),
        revCutBefore(ctx.db, now - retention.horizonMs, rev),
        sliceRows,
        record.listedAt ?? null,
      );
      const historyCut = Math.max(record.historyCut ?? 0, run.historyCut);
      writeCollectorRecord(ctx.db, { ...record, running: now, historyCut });
      return run;
    });
  }

  get done(): boolean {
    return this.phase === "done";
  }

  /** Whether writes must say which packs in R2 they name (`touch`): only while the run has packs to judge. */
  get judgesPacks(): boolean {
    return this.ctx.packStore !== undefined && this.phase !== "done";
  }

  /** Marks the chunks a write names (called inside its transaction, after it applied). */
  referenced(chunks: Iterable<Uint8Array>): void {
    for (const hash of chunks) this.marks.add(hash);
  }

  /** Packs in R2 holding chunks a write named (called inside its transaction). */
  touch(packs: Iterable<number>): void {
    for (const id of packs) this.touched.add(id);
  }

  /** The workspace was deleted: nothing the run still awaits is recorded. */
  abandon(): void {
    this.abandoned = true;
  }

  /** Runs one slice; the last one records the run. A call while one runs waits for it instead. */
  step(): Promise<void> {
    if (this.phase === "done") return Promise.resolve();
    this.stepping ??= this.slice().finally(() => {
      this.stepping = null;
    });
    return this.stepping;
  }

  private async slice(): Promise<void> {
    const store = this.ctx.packStore;
    const inR2 = this.phase === "orphans" || this.phase === "drop" || (this.phase === "rewrite" && store?.takesUploads);
    if (store !== undefined && inR2) await this.r2Slice(store);
    else {
      const judging = this.phase === "packs";
      this.db.transaction(() => this.sqlSlice());
      // Packs whose grace is over go from R2 at once: an upload of the same bytes waits while one is queued.
      if (judging && store !== undefined) await this.deleteQueued(store);
    }
    this.freed.slices++;
    this.freed.rowsRead = this.db.meter.rowsRead;
    this.freed.rowsWritten = this.db.meter.rowsWritten;
    if (this.phase === "done" && !this.abandoned) this.db.transaction(() => this.finish());
  }

  private sqlSlice(): void {
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
        const s = sweepObjects(db, this.marks, this.hashCursor, this.sliceRows, this.cuts(), this.lastPack, this.live);
        this.freed.objects += s.deleted;
        this.freed.objectBytes += s.deletedBytes;
        this.freed.storedBytes += s.inlineBytes;
        this.freed.packsRevived += revivePacks(db, s.revive);
        this.oldestGrace = older(this.oldestGrace, s.oldestGrace);
        this.hashCursor = s.next;
        if (s.next === null) this.phase = "packs";
        return;
      }
      case "packs": {
        const s = classifyPacks(db, this.packCursor, this.sliceRows, this.judging());
        this.freed.packsDeleted += s.deleted;
        this.freed.packsCondemned += s.condemned;
        this.freed.storedBytes += s.deletedBytes;
        if (s.next !== null) this.packCursor = s.next;
        else this.phase = this.sparse.size > 0 ? "gather" : this.afterRewrites();
        return;
      }
      case "gather": {
        const graceBefore = this.cuts().graceBefore;
        this.hashCursor = gatherMembers(
          db,
          this.hashCursor,
          this.sliceRows,
          this.sparse,
          this.members,
          (hash, at) => this.marks.has(hash) || (at !== null && at >= graceBefore),
        );
        if (this.hashCursor === null) this.phase = "rewrite";
        return;
      }
      case "rewrite": {
        // Without a bucket taking uploads: into SQLite (classify.ts gave no packs in R2 to rewrite).
        this.members = rewriteSqliteBatch(db, this.members, SLICE_PACKS, this.sparse, this.freed);
        if (this.members.length === 0) this.phase = this.afterRewrites();
        return;
      }
      default:
        this.phase = this.afterRewrites();
    }
  }

  /** The listing and the deletes need a bucket: without one, queued deletes wait for it. */
  private afterRewrites(): Phase {
    return this.ctx.packStore === undefined ? "done" : "orphans";
  }

  private async r2Slice(store: NonNullable<SyncContext["packStore"]>): Promise<void> {
    const { db } = this;
    const abandoned = () => this.abandoned;
    if (this.phase === "rewrite") {
      const batch = takeBatch(this.members);
      const s = await rewriteIntoR2(db, store, batch, this.touched, this.ctx.now, abandoned);
      this.members = this.members.slice(batch.length);
      this.freed.packsRewritten += s.rewritten;
      this.freed.packsCondemned += s.condemned;
      this.freed.storedBytes += s.sqliteBytes;
      if (this.members.length === 0) this.phase = "orphans";
    } else if (this.phase === "orphans") {
      const due = this.listedAt === null || this.listedAt <= this.startedAt - this.retention.packGraceMs;
      if (!due) {
        this.phase = "drop";
        return;
      }
      const { condemnedBefore } = this.cuts();
      const page = await listOrphans(db, store, this.listCursor, condemnedBefore, this.ctx.now(), abandoned);
      this.freed.orphans += page.queued;
      this.listCursor = page.next;
      if (page.next === null) {
        this.listed = true;
        this.phase = "drop";
      }
    } else {
      const deleted = await this.deleteQueued(store);
      if (deleted === 0) {
        if (!this.abandoned)
          db.transaction(() => pruneDeleted(db, this.cuts().condemnedBefore, this.retention.packGraceMs));
        this.phase = "done";
      }
    }
  }

  /** One batch of queued R2 deletes (r2-deletes.ts); how many. */
  private async deleteQueued(store: NonNullable<SyncContext["packStore"]>): Promise<number> {
    const deleted = await deleteQueued(this.db, store, this.ctx.now(), () => this.abandoned);
    this.freed.r2Deleted += deleted;
    return deleted;
  }

  private cuts(): { graceBefore: number; condemnedBefore: number } {
    return {
      graceBefore: this.startedAt - this.retention.graceMs,
      condemnedBefore: this.startedAt - this.retention.packGraceMs,
    };
  }

  private judging(): PackJudging {
    return {
      lastPack: this.lastPack,
      live: this.live,
      sparse: this.sparse,
      touched: this.touched,
      condemnedBefore: this.cuts().condemnedBefore,
      now: this.ctx.now(),
      toR2: this.ctx.packStore?.takesUploads ?? false,
      move: this.move,
    };
  }

  /** Records the run (inside the last slice's transaction) with when the next one is due. */
  private finish(): void {
    const oldest = { version: this.oldestVersion, tombstone: this.oldestTombstone, grace: this.oldestGrace };
    const { startedAt, rev, lastPack, freed, listed } = this;
    recordRunEnd(this.db, this.retention, { startedAt, rev, lastPack, freed, listed, oldest }, this.ctx.now());
  }
}
