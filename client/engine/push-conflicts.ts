/**
 * The sync's last step (sync.ts): the push, and the conflicts it meets
 * resolved by pulling.
 */
import { conflictsOf } from "../../protocol/error-details.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { trace } from "../common/trace.ts";
import { reconcile, resumeFrom } from "./catch-up.ts";
import type { EngineContext } from "./context.ts";
import type { DeletionGuard } from "./mass-delete.ts";
import { pullChanges } from "./pull.ts";
import { pushPending } from "./push.ts";

/** Conflicts on push resolved by pulling before the engine gives up. */
const MAX_CONFLICT_ROUNDS = 3;

/**
 * Pushes what is pending; a push refused as a `conflict` (the server moved
 * under this host) pulls and pushes again, up to MAX_CONFLICT_ROUNDS times.
 * `deletions` holds back a mass deletion unless `allowMassDelete`.
 */
export async function pushResolvingConflicts(
  ctx: EngineContext,
  deletions: DeletionGuard | null,
  allowMassDelete: boolean,
): Promise<void> {
  for (let round = 1; ; round++) {
    try {
      const deleting = deletions?.check(ctx.store, ctx.acked.rev, ctx.root, allowMassDelete) ?? 0;
      await pushPending(ctx);
      deletions?.pushed(deleting);
      return;
    } catch (e) {
      if (!(e instanceof ProtocolError) || e.code !== "conflict") throw e;
      trace(() => `conflict: ${(conflictsOf(e) ?? []).map((c) => `${c.path} rev ${c.rev}`).join(", ")}`);
      if (round > MAX_CONFLICT_ROUNDS) throw namingConflicts(e);
    }
    // The server moved under this host: take its changes (keeping local
    // versions as conflict copies), then push again. The last round compares
    // the whole state, in case the saved cursor is past what conflicts, and
    // without history: this store is intact, so a new local file meets the
    // merge rules (a conflict copy), not a lost store's "the later save
    // wins" (PROTOCOL.md §9.3 rule 5), which replaced another host's version
    // with no copy (soak seeds 33, 36, 80).
    if (round < MAX_CONFLICT_ROUNDS) {
      await pullChanges(ctx, { ...resumeFrom(ctx.store.position().pull), mode: "merge", skipOwn: true });
    } else {
      await reconcile(ctx, "reconcile", { history: false });
    }
  }
}

/**
 * The conflict a host could not resolve by pulling, rethrown naming its
 * paths (the server's message only counts them), so a user can look at them.
 */
function namingConflicts(e: ProtocolError): ProtocolError {
  const paths = (conflictsOf(e) ?? []).map((c) => c.path);
  if (paths.length === 0) return e;
  const shown = paths.slice(0, 10).join(", ") + (paths.length > 10 ? `, and ${paths.length - 10} more` : "");
  return new ProtocolError(
    "conflict",
    `still in conflict after pulling ${MAX_CONFLICT_ROUNDS} times: ${shown}`,
    e.details,
  );
}
