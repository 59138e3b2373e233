/**
 * Pulling: pages of `changes` from a cursor, each applied entry by entry in
 * (rev, path) order, then the cursor saved with the page's records in one
 * transaction; the next page is fetched while one is applied. File bytes
 * are fetched ahead in batches bounded by bytes, for the entries that will
 * likely need them (not those the host already has).
 */

import type { Change } from "../../protocol/changes.ts";
import { type Cursor, cursorsEqual } from "../../protocol/cursor.ts";
import type { Entry } from "../../protocol/entry.ts";
import { reservedProblem } from "../../protocol/paths.ts";
import { nowMs } from "../common/clock.ts";
import { signatureMatches } from "../common/entry-state.ts";
import type { Deferred } from "../store/store.ts";
import { Applier } from "./apply.ts";
import type { EngineContext } from "./context.ts";
import type { MergeMode } from "./decide.ts";
import { ObjectFetcher, type Wanted, wantedChunks } from "./fetch-objects.ts";
import { journalPage } from "./pull-journal.ts";
import { ledgerOf } from "./renames.ts";

/** Object bytes fetched ahead at most, per batch. */
const PREFETCH_BYTES = 32 * 1024 * 1024;

export interface PullChangesOptions {
  readonly from: Cursor;
  /** The identity of `from.rev` the host holds: the server refuses the pull if it is another history's. */
  readonly fromRevId?: Uint8Array;
  readonly mode: MergeMode;
  /** Skip this host's own changes (false when reconciling: the host wants the whole state). */
  readonly skipOwn: boolean;
  /** Ask for each path's earlier server states (a reconcile: decide.ts tells stale local states from local work). */
  readonly history?: boolean;
  /** Called with every path the server has a state for (reconciles track what the server lacks). */
  readonly onPath?: (path: string) => void;
}

/** Pulls until the server has nothing more; returns the cursor reached (also saved). */
export async function pullChanges(ctx: EngineContext, opts: PullChangesOptions): Promise<Cursor> {
  const { epoch, limits } = ctx.server;
  const fetcher = new ObjectFetcher(ctx);
  const applier = new Applier(ctx, fetcher);
  let after = opts.from;
  let entries = 0;
  let bytes = 0;
  // Bytes the pages' files needed that came from the disk (a copy, a rename) or were never
  // needed after all: counted done once their page is, so the download line ends at its total.
  const receivedBefore = ctx.report.objectBytesReceived;
  let notDownloaded = 0;
  const fetchPage = (from: Cursor, revId: Uint8Array | undefined) => {
    const p = ctx.call("changes", {
      after: from,
      ...(revId && from.rev > 0 ? { revId } : {}),
      epoch,
      limit: limits.maxPageEntries,
      ...(opts.skipOwn ? { hostId: ctx.store.hostId } : {}),
      ...(opts.history ? { history: true } : {}),
    });
    p.catch(() => {}); // awaited below; this only keeps a failure from being "unhandled" meanwhile
    return p;
  };
  const deferrals = new Deferrals(ctx);
  let nextPage = fetchPage(after, opts.fromRevId);
  try {
    await retryDeferred(ctx, applier, deferrals, opts.mode);
    for (;;) {
      const page = await nextPage;
      const next = page.next;
      const last = !page.more || cursorsEqual(next, after);
      // The next page is on its way while this one is written.
      if (!last) nextPage = fetchPage(next, page.revId);
      ctx.report.entriesReceived += page.entries.length;
      // Changes no host may hold (PROTOCOL.md §9.3): refused alone; the cursor passes them, as nothing could apply them.
      for (const u of page.unreadable ?? []) ctx.report.refused.push(u);
      for (const c of page.entries) ctx.report.received.push({ path: c.path, kind: c.kind });
      ledgerOf(ctx.report).received(ctx.store, page.entries);
      entries += page.entries.length;
      // Asked once an entry (each asks the store): the byte total here, the prefetch batches below.
      const needsBytes = page.entries.map((c) => applier.mayNeedBytes(c));
      page.entries.forEach((c, i) => {
        if (c.kind === "file" && needsBytes[i]) bytes += c.size;
      });
      ctx.progress.begin("pull", entries, !last);
      ctx.progress.begin("download", bytes, !last);
      ctx.report.serverRev = Math.max(ctx.report.serverRev, page.rev);
      const signatures = journalPage(ctx.store, page.entries);
      await applyPage(ctx, applier, fetcher, deferrals, { entries: page.entries, signatures, needsBytes }, opts);
      fetcher.clear();
      const short = bytes - (ctx.report.objectBytesReceived - receivedBefore) - notDownloaded;
      if (short > 0) {
        ctx.progress.advance("download", short);
        notDownloaded += short;
      }
      applier.flush(() => {
        deferrals.save();
        ctx.store.setPull({ epoch, cursor: next, ...(page.revId ? { revId: page.revId } : {}) });
        ctx.store.clearPullJournal();
      });
      if (last) {
        applier.settleKeptDirs();
        applier.flush();
        ctx.progress.end("pull");
        ctx.progress.end("download");
        return next;
      }
      after = next;
    }
  } catch (e) {
    // A pull stopped mid-page (a full disk, a lost server): what reached the
    // disk is recorded (the journal stays, for a crash in here) and the cursor
    // stays, so the page comes again and adopts it.
    applier.flush(() => deferrals.save());
    throw e;
  } finally {
    applier.finishDirs();
  }
}

/**
 * The changes earlier pulls could not write, tried again first: a path the
 * host refused stays pending across pulls, not forgotten behind the cursor.
 */
async function retryDeferred(
  ctx: EngineContext,
  applier: Applier,
  deferrals: Deferrals,
  mode: MergeMode,
): Promise<void> {
  const stored = deferrals.stored();
  if (stored.length === 0) return;
  journalPage(
    ctx.store,
    stored.map((d) => d.change),
  );
  for (const { change } of stored) {
    // Refused by a host from before protocol/paths.ts shared the rule, and kept, then failed every pull (exit 3)
    // forever: no pull can ever apply it, so it goes, said once more, as a change no host may hold does.
    const reserved = reservedProblem(change.path);
    if (reserved !== null) ctx.report.refused.push({ path: change.path, reason: `${reserved}: not tried again` });
    const dropped = reserved !== null || superseded(ctx, applier, change);
    deferrals.note(change, dropped ? "superseded" : await applier.apply(change, mode));
  }
  applier.flush(() => {
    deferrals.save();
    ctx.store.clearPullJournal();
  });
}

/**
 * A refused change that is history: the host agreed to a newer state of its
 * path since (it pushed one), or, for a file or symlink, to a live path
 * under it. The server took that path only under a directory (PROTOCOL.md
 * §4.5 rule 8), so the refused state was replaced since, by a change this
 * pull brings or this host's own. Retried, it would move the directory to a
 * conflict copy with the host's own pushed paths in it, which no pull brings
 * back (soak seed 22).
 */
function superseded(ctx: EngineContext, applier: Applier, change: Change): boolean {
  if ((applier.record(change.path)?.serverRev ?? 0) > change.rev) return true;
  if (change.kind !== "file" && change.kind !== "symlink") return false;
  const gone: Entry = { kind: "gone", path: change.path };
  return ctx.store
    .under(change.path)
    .some((r) => r.serverRev > change.rev && r.agreed !== null && !signatureMatches(gone, r.agreed));
}

/** Refused changes of this pull, written with the page's records (store.deferred). */
class Deferrals {
  private readonly changes = new Map<string, { change: Change; reason: string } | null>();

  /** Paths the store holds a deferred change for (almost always none). */
  private readonly held: Set<string>;
  private readonly loaded: readonly Deferred[];

  constructor(private readonly ctx: EngineContext) {
    this.loaded = ctx.store.deferred();
    this.held = new Set(this.loaded.map((d) => d.change.path));
  }

  stored(): readonly Deferred[] {
    return this.loaded;
  }

  /** Keeps `c` when it was refused, with the reason the applier has just reported; forgets its path otherwise. */
  note(c: Change, outcome: Awaited<ReturnType<Applier["apply"]>> | "superseded"): void {
    if (outcome === "refused") {
      this.changes.set(c.path, { change: c, reason: this.ctx.report.refused.at(-1)?.reason ?? "" });
      this.held.add(c.path);
    } else if (this.held.has(c.path)) {
      this.changes.set(c.path, null);
      this.held.delete(c.path);
    }
  }

  save(): void {
    for (const [path, d] of this.changes) {
      if (d) this.ctx.store.defer(d);
      else this.ctx.store.undefer(path);
    }
    this.changes.clear();
  }
}

/**
 * Applies a page in order, in batches of about PREFETCH_BYTES of predicted
 * downloads: while batch k is written, batch k + 1 is fetched, and the event
 * loop is given a turn every few ms so that fetch actually progresses
 * (the writes are synchronous).
 */
async function applyPage(
  ctx: EngineContext,
  applier: Applier,
  fetcher: ObjectFetcher,
  deferrals: Deferrals,
  page: Page,
  opts: PullChangesOptions,
): Promise<void> {
  const { entries, signatures } = page;
  const batches = planBatches(page);
  const load = (b: number): Promise<void> | null => {
    const chunks = batches[b]?.chunks;
    if (!chunks || chunks.length === 0) return null;
    const p = fetcher.load(chunks);
    p.catch(() => {}); // awaited below; this only keeps a failure from being "unhandled" meanwhile
    return p;
  };
  let loading = load(0);
  let yielded = nowMs();
  for (let b = 0; b < batches.length; b++) {
    await loading;
    loading = load(b + 1);
    const batch = batches[b] as Batch;
    for (let i = batch.from; i < batch.to; i++) {
      const given = entries[i] as Change;
      // A reconcile asked for history: a change without `past` had no earlier state.
      const c = opts.history && !given.past ? { ...given, past: [] } : given;
      opts.onPath?.(c.path);
      deferrals.note(c, await applier.apply(c, opts.mode, signatures[i]));
      ctx.progress.advance("pull", 1);
      if (nowMs() - yielded > YIELD_EVERY_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        yielded = nowMs();
      }
    }
  }
  await loading;
}

/** Let network I/O run at least this often while writing files. */
const YIELD_EVERY_MS = 4;

interface Batch {
  readonly from: number;
  readonly to: number;
  /** Chunks its entries will likely need (a large file: only its first window; the rest is fetched as it is written). */
  readonly chunks: Wanted[];
}

/** A page's entries, each one's signature (journalPage) and whether it will likely need its bytes (mayNeedBytes). */
interface Page {
  readonly entries: readonly Change[];
  readonly signatures: readonly Uint8Array[];
  readonly needsBytes: readonly boolean[];
}

function planBatches({ entries, needsBytes }: Page): Batch[] {
  const batches: Batch[] = [];
  let from = 0;
  let bytes = 0;
  let chunks: Wanted[] = [];
  for (let i = 0; i < entries.length; i++) {
    const c = entries[i] as Change;
    if (c.kind !== "file" || !needsBytes[i]) continue;
    if (bytes > 0 && bytes + c.size > PREFETCH_BYTES) {
      batches.push({ from, to: i, chunks });
      from = i;
      bytes = 0;
      chunks = [];
    }
    chunks.push(...wantedChunks(c, 0, c.size > PREFETCH_BYTES ? WINDOW_CHUNKS : c.chunks.length));
    bytes += c.size;
  }
  batches.push({ from, to: entries.length, chunks });
  return batches;
}

const WINDOW_CHUNKS = 16;
