/**
 * The workspace object's storage admin (PROTOCOL.md §7.1, §7.10), called
 * by its RPC methods after the Worker's auth: stats' storage figures, a
 * collection now, and deleting the whole workspace.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { toHex } from "../../protocol/hash.ts";
import { ID_BYTES } from "../../protocol/hello.ts";
import type { Env } from "../env.ts";
import type { SyncContext } from "../sync/db.ts";
import { marksAfterDeleting, recordDeletedMarks } from "../sync/deleted-histories.ts";
import type { LastCollection } from "../sync/gc/summary.ts";
import { readUsage, type StorageUsage } from "../sync/gc/usage.ts";
import { readEpoch } from "../sync/meta.ts";
import { readRetention } from "../sync/retention.ts";
import { closeFromServer } from "./answer-credit.ts";
import { releaseEnded } from "./answer-share.ts";
import type { Collector } from "./collector.ts";
import { ENDED_CHECK_MS } from "./pokes.ts";
import type { Scheduler } from "./scheduler.ts";
import { migrate } from "./schema.ts";
import { readSocketState } from "./socket-state.ts";

export function storageUsage(sync: SyncContext, env: Env): StorageUsage {
  const retention = readRetention(env);
  const cap = sync.capacity?.capBytes();
  return {
    ...readUsage(sync, retention instanceof ProtocolError ? null : retention),
    usedBytes: sync.capacity?.usedBytes() ?? 0,
    capBytes: typeof cap === "number" ? cap : null,
  };
}

/** The Worker refuses a misconfigured retention before it calls this; here it is a broken invariant. */
export function collectNow(collector: Collector, env: Env): Promise<LastCollection> {
  const retention = readRetention(env);
  if (retention instanceof ProtocolError) throw new Error(retention.message);
  return collector.collectNow(retention);
}

/**
 * Every row, object and the alarm; sockets closed with 1001; then a new,
 * empty history under a new epoch. The deleted history's epoch and host ids
 * (and those deleted before) are kept, so that a host that synced it is told
 * `workspace_deleted` at hello instead of pushing its tree back (§7.10).
 * Answers the new history (its epoch, hex): the Worker then deletes every
 * pack of the workspace not under its prefix (worker/r2/delete-packs.ts).
 */
export async function deleteWorkspace(
  ctx: DurableObjectState,
  sync: SyncContext,
  collector: Collector,
  scheduler: Scheduler,
): Promise<string> {
  const owner = ctx.id.toString();
  for (const ws of ctx.getWebSockets()) {
    const state = readSocketState(ws);
    if (state !== null) closeFromServer(ws, state, 1001, "workspace deleted", owner);
    else {
      try {
        ws.close(1001, "workspace deleted");
      } catch {
        // Already closed.
      }
    }
  }
  const marks = marksAfterDeleting(sync.db, readEpoch(sync.db), sync.now());
  collector.reset();
  await scheduler.clear();
  await ctx.storage.deleteAll();
  // Sockets closed here that were not reading hold their share until their connection ends (answer-share.ts).
  if (releaseEnded(owner)) await scheduler.wakeBy(Date.now() + ENDED_CHECK_MS);
  migrate(sync.db, crypto.getRandomValues(new Uint8Array(ID_BYTES)));
  recordDeletedMarks(sync.db, marks);
  return toHex(readEpoch(sync.db));
}
