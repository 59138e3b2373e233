/**
 * `ferry push --heal` (PROTOCOL.md §7.11): after its push, the host asks
 * the server with `has` about every chunk of every file it holds as agreed
 * with the server, and uploads the ones the server answers missing. A
 * server answers an object it holds missing once it found the object's
 * bytes damaged (a pack truncated or deleted behind its back) and forgot it;
 * the upload stores it anew. A file changed since it was scanned is left
 * out (its next push sends it); the rest still go.
 */
import { signatureMatches } from "../common/entry-state.ts";
import type { PathRecord } from "../store/store.ts";
import type { EngineContext } from "./context.ts";
import { bodyBudget } from "./pack-size.ts";
import { type ChunkRef, probe, refsOf, StaleFile, upload } from "./push-objects.ts";

/** Uploads the chunks of the host's agreed files that the server does not hold; returns how many it uploaded. */
export async function healObjects(ctx: EngineContext): Promise<number> {
  const agreed: PathRecord[] = [];
  for (const r of ctx.store.all()) {
    if (r.entry.kind === "file" && signatureMatches(r.entry, r.agreed)) agreed.push(r);
  }
  // Every chunk asked, those this sync saw held included: a held chunk is what the server may have lost.
  ctx.heldChunks.clear();
  let missing: ChunkRef[] = await probe(ctx, refsOf(agreed));
  const count = missing.length;
  let stale = 0;
  for (;;) {
    try {
      await upload(ctx, missing, bodyBudget(ctx.server.limits), true);
      return count - stale;
    } catch (e) {
      if (!(e instanceof StaleFile)) throw e;
      const before = missing.length;
      missing = missing.filter((m) => m.record.entry.path !== e.path);
      stale += before - missing.length;
    }
  }
}
