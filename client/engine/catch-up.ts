/**
 * Catching up with the server, the sync's middle step (sync.ts): which way
 * (catchUpMode, from hello and the store's position), and the whole-state
 * compare a reconcile, a resync and a change of ignore rules make.
 */
import { type Cursor, ORIGIN } from "../../protocol/cursor.ts";
import type { HelloResponse, PullPosition } from "../../protocol/hello.ts";
import { trace } from "../common/trace.ts";
import type { HostStore, PathRecord, StorePosition } from "../store/store.ts";
import type { EngineContext } from "./context.ts";
import { applyDroppedDeletions, deletedPastHorizon } from "./horizon.ts";
import { rulesLetGo } from "./ignored-left.ts";
import { pullChanges } from "./pull.ts";
import type { SyncMode } from "./report.ts";

/**
 * Whether this sync will pull the server's whole state before pushing (a
 * reconcile, whatever `catchUpMode` then decides from the pending count):
 * the host's chunks are then mostly on the server already, and uploading
 * them while scanning would only probe for them batch by batch.
 */
export function reconciles(hello: HelloResponse, position: StorePosition): boolean {
  const neverPulled = position.pull === null;
  return hello.resync || hello.acked.rev > position.hostRev || (neverPulled && hello.rev > 0);
}

/**
 * Decides how to catch up. A store older than the server's `acked` (it was
 * restored from a copy) first re-stamps its unacknowledged changes above
 * `acked`: the revs in between were used by the lost copy.
 */
export function catchUpMode(ctx: EngineContext, hello: HelloResponse, position: StorePosition): SyncMode {
  let mode: SyncMode = "incremental";
  if (hello.acked.rev > position.hostRev) {
    restampAbove(ctx.store, position.acked.rev, hello.acked.rev);
    mode = "reconcile";
  }
  // Past the tombstone horizon alone, the server's history is this host's: a merge, not a restore's local-wins.
  if (hello.resync) return pastHorizonOnly(hello) ? "reconcile" : "resync";
  const neverPulled = position.pull === null;
  if (neverPulled && hello.rev > 0 && ctx.store.pendingCount(ctx.acked.rev) > 0) return "reconcile";
  return mode;
}

/** Re-stamps every change the store had not seen acknowledged above `ackedRev`, the server's `acked`. */
function restampAbove(store: HostStore, storeAckedRev: number, ackedRev: number): void {
  store.transaction(() => {
    store.raiseHostRev(ackedRev);
    // Every change this store had not seen acknowledged, whatever rev it had.
    const pending = store.pending(storeAckedRev, Number.MAX_SAFE_INTEGER);
    let rev = pending.length > 0 ? store.reserveHostRevs(pending.length) : 0;
    for (const r of pending) store.put({ ...r, hostRev: rev++ });
  });
}

/**
 * Pulls the server's whole state (entries; bytes only where they differ),
 * then stamps for push every synced local path the server has no entry for;
 * past the tombstone horizon (`horizon`), one this host agreed with the
 * server and did not change since was deleted there, and is deleted here.
 * A first meeting (`meets`) keeps both sides of what differs (decide.ts).
 */
export async function reconcile(
  ctx: EngineContext,
  mode: SyncMode,
  {
    horizon = false,
    history = true,
    meets = false,
  }: { readonly horizon?: boolean; readonly history?: boolean; readonly meets?: boolean } = {},
): Promise<void> {
  ctx.leftIgnoredUnder = null;
  const onServer = new Set<string>();
  await pullChanges(ctx, {
    from: ORIGIN,
    mode: mode === "resync" ? "local-wins" : meets ? "meet" : "merge",
    skipOwn: false,
    history,
    onPath: (p) => onServer.add(p),
  });
  const store = ctx.store;
  // The whole state compared: what is left alone now is what this pull skipped (a `.ferryignore`
  // it brought moved the rules since, when that is not their digest: pullWhatRulesLetGo looks again).
  store.setIgnoredLeft(ctx.leftIgnoredUnder);
  const absent = (r: PathRecord) => !onServer.has(r.entry.path) && r.entry.kind !== "gone" && !ctx.isPending(r.hostRev);
  if (horizon) {
    const dropped = ctx.server.tombstonesDropped ?? 0;
    const deleted = [...store.all()].filter((r) => absent(r) && deletedPastHorizon(r, dropped));
    await applyDroppedDeletions(
      ctx,
      deleted.map((r) => r.entry.path),
      dropped,
    );
  }
  store.transaction(() => {
    // What is left (deleted ones are tombstones now; a save since the scan is pending): pushed back.
    const missing = [...store.all()].filter(absent);
    let rev = missing.length > 0 ? store.reserveHostRevs(missing.length) : 0;
    for (const r of missing) store.put({ ...r, hostRev: rev++ });
  });
}

/**
 * This host left server paths alone because it ignored them (a pull
 * skipped their changes, or a scan forgot their records: a file deleted
 * here while ignored pushed no deletion), under rules that have changed
 * since, in this process or between two commands (ignored-left.ts): what
 * the rules no longer ignore may be among them. The whole state is
 * compared again, with the server's history, as for a lost store: a path
 * the server holds and this host does not is pulled (it was never deleted
 * on the workspace), a local copy the server had before is stale and takes
 * the server's state, local work is kept (PROTOCOL.md §9.3). A compare
 * whose own pull brought other rules looks once more.
 */
export async function pullWhatRulesLetGo(ctx: EngineContext, options: { readonly pull?: boolean }): Promise<void> {
  if (!(options.pull ?? true)) return;
  for (let look = 0; look < 2 && rulesLetGo(ctx.store, ctx.ignore); look++) {
    trace(() => "sync: the ignore rules changed since paths were left alone, comparing the whole state");
    await reconcile(ctx, "reconcile");
  }
}

/** Where an incremental pull starts: the saved cursor and the identity of its rev, which the server checks. */
export function resumeFrom(pull: PullPosition | null): { from: Cursor; fromRevId?: Uint8Array } {
  if (!pull) return { from: ORIGIN };
  return { from: pull.cursor, ...(pull.revId ? { fromRevId: pull.revId } : {}) };
}

/** Hello's `resync` has the tombstone horizon as its only reason (PROTOCOL.md §4.1). */
export function pastHorizonOnly(hello: HelloResponse): boolean {
  return hello.resync && hello.horizon === true;
}
