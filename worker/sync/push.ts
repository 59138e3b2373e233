/** push: one host's change-pack, applied atomically and idempotently (apply.ts). */
import type { ProtocolError } from "../../protocol/errors.ts";
import type { PushRequest, PushResponse } from "../../protocol/push.ts";
import { applyPack } from "./apply.ts";
import type { SyncContext } from "./db.ts";
import { verifyObjects } from "./objects.ts";

export async function push(ctx: SyncContext, req: PushRequest): Promise<PushResponse | ProtocolError> {
  // Hashing is asynchronous, so it happens before the transaction, which
  // must be synchronous to hold every read and write of the pack together.
  const refusal = await verifyObjects(req.objects);
  if (refusal) return refusal;
  return ctx.db.transaction(() => applyPack(ctx, req));
}
