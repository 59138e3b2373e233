/** push: one host's change-pack, applied atomically and idempotently (apply.ts). */
import { ProtocolError } from "../../protocol/errors.ts";
import { hashAt, hashCount } from "../../protocol/hash.ts";
import type { PushEntry, PushRequest, PushResponse } from "../../protocol/push.ts";
import { inlineObjectBytes, SMALL_PUSH_BYTES } from "../../protocol/version.ts";
import { applyPack } from "./apply.ts";
import type { SyncContext } from "./db.ts";
import { localIndex, packObjects, recordOrForget } from "./r2-ingest.ts";
import { verifyObjects } from "./verify-objects.ts";

export async function push(ctx: SyncContext, req: PushRequest): Promise<PushResponse | ProtocolError> {
  if (ctx.packStore?.takesUploads && inlineObjectBytes(req.objects) > SMALL_PUSH_BYTES) {
    // With R2 (a push in a socket frame: over HTTP the Worker did this already, worker/r2/push-route.ts),
    // the inline objects become packs in R2 first, recorded in the push's transaction if it commits.
    // A small push's stay in SQLite below, as without R2: a collection moves them (SMALL_PUSH_BYTES).
    ctx.onIngest?.();
    const packed = await packObjects(ctx.packStore, localIndex(ctx), req.objects);
    if (packed instanceof ProtocolError) return packed;
    const store = ctx.packStore;
    return recordOrForget(store, packed, () => push({ ...ctx, packed }, { ...req, objects: [] }));
  }
  // Hashing is asynchronous, so it happens before the transaction, which
  // must be synchronous to hold every read and write of the pack together.
  const refusal = await verifyObjects(req.objects);
  if (refusal) return refusal;
  return ctx.db.transaction(() => {
    const outcome = applyPack(ctx, req);
    // Before the transaction ends, so no collection slice runs between the
    // commit and the collector learning what the pack references.
    if (!(outcome instanceof ProtocolError) && outcome.applied) ctx.onWrite?.(chunksOf(req.entries));
    return outcome;
  });
}

/** Each chunk a pack names, as a view into its file's hash list (made as the collector reads it). */
function* chunksOf(entries: readonly PushEntry[]): Generator<Uint8Array> {
  for (const e of entries)
    if (e.kind === "file") for (let i = 0; i < hashCount(e.chunks); i++) yield hashAt(e.chunks, i);
}
