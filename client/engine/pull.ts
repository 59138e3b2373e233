/**
 * Pulling: pages of `changes` from a cursor, each applied entry by entry in
 * (rev, path) order, then the cursor saved with the page's records in one
 * transaction. File bytes are fetched ahead in batches bounded by bytes, for
 * the entries that will likely need them (not those the host already has).
 */

import type { Change } from "../../protocol/changes.ts";
import { type Cursor, cursorsEqual } from "../../protocol/cursor.ts";
import { Applier } from "./apply.ts";
import type { SyncContext } from "./context.ts";
import type { MergeMode } from "./decide.ts";
import { ObjectFetcher } from "./fetch-objects.ts";

/** Object bytes fetched ahead at most, per batch. */
const PREFETCH_BYTES = 32 * 1024 * 1024;

export interface PullOptions {
  readonly from: Cursor;
  readonly mode: MergeMode;
  /** Skip this host's own changes (false when reconciling: the host wants the whole state). */
  readonly skipOwn: boolean;
  /** Called with every path the server has a state for (reconciles track what the server lacks). */
  readonly onPath?: (path: string) => void;
}

/** Pulls until the server has nothing more; returns the cursor reached (also saved). */
export async function pullChanges(ctx: SyncContext, opts: PullOptions): Promise<Cursor> {
  const { epoch, limits } = ctx.server;
  const fetcher = new ObjectFetcher(ctx);
  const applier = new Applier(ctx, fetcher);
  let after = opts.from;
  let entries = 0;
  let bytes = 0;
  for (;;) {
    const page = await ctx.call("changes", {
      after,
      epoch,
      limit: limits.maxPageEntries,
      ...(opts.skipOwn ? { hostId: ctx.store.hostId } : {}),
    });
    ctx.report.entriesReceived += page.entries.length;
    entries += page.entries.length;
    for (const c of page.entries) if (c.kind === "file" && applier.mayNeedBytes(c)) bytes += c.size;
    ctx.progress.begin("pull", entries);
    ctx.progress.begin("download", bytes);
    ctx.report.serverRev = Math.max(ctx.report.serverRev, page.rev);
    await applyPage(ctx, applier, fetcher, page.entries, opts);
    fetcher.clear();
    const next = page.next;
    applier.flush(() => ctx.store.setPull({ epoch, cursor: next }));
    if (!page.more || cursorsEqual(next, after)) {
      ctx.progress.end("pull");
      ctx.progress.end("download");
      return next;
    }
    after = next;
  }
}

async function applyPage(
  ctx: SyncContext,
  applier: Applier,
  fetcher: ObjectFetcher,
  entries: readonly Change[],
  opts: PullOptions,
): Promise<void> {
  for (let i = 0; i < entries.length; i++) {
    const c = entries[i] as Change;
    opts.onPath?.(c.path);
    if (c.kind === "file" && c.chunks.some((h) => !fetcher.get(h)) && applier.mayNeedBytes(c)) {
      fetcher.clear();
      await fetcher.load(prefetchList(applier, entries, i));
    }
    await applier.apply(c, opts.mode);
    ctx.progress.advance("pull", 1);
  }
}

/** Chunks of entries from `i` on that will likely need bytes, up to PREFETCH_BYTES (the first file in full or its first window). */
function prefetchList(applier: Applier, entries: readonly Change[], i: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let bytes = 0;
  for (let j = i; j < entries.length && bytes < PREFETCH_BYTES; j++) {
    const c = entries[j] as Change;
    if (c.kind !== "file" || (j > i && !applier.mayNeedBytes(c))) continue;
    if (j > i && bytes + c.size > PREFETCH_BYTES) break;
    // A file larger than the batch is fetched window by window as it is written.
    out.push(...(c.size > PREFETCH_BYTES ? c.chunks.slice(0, 16) : c.chunks));
    bytes += c.size;
  }
  return out;
}
