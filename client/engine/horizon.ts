/**
 * Deletions a host learns from their absence. Past the tombstone horizon
 * (hello's `resync` with `horizon`, PROTOCOL.md §4.1, §9.3) the server no
 * longer lists deletions up to `tombstonesDropped`, but its history is the
 * one this host saw, so the host's saved states are true: a path it agreed
 * with the server at or before that rev, did not change since, and the
 * server no longer lists at all was deleted there. The reconcile (sync.ts)
 * applies a `gone` to each, in path order, as a pull applies a tombstone:
 * re-checked on disk right before removal, so a save since the scan is kept
 * and pushed instead.
 */
import { comparePaths } from "../../protocol/cursor.ts";
import type { PathRecord } from "../store/store.ts";
import { Applier } from "./apply.ts";
import type { EngineContext } from "./context.ts";
import { ObjectFetcher } from "./fetch-objects.ts";

/**
 * Whether the server's silence about `r` (an unchanged local path) can only
 * be a dropped deletion: the host agreed it with the server at a rev whose
 * later tombstones may be gone. Agreed after `dropped`, a deletion of it
 * would still be listed, so its absence means something else and the
 * path is pushed back, as in any reconcile.
 */
export function deletedPastHorizon(r: PathRecord, dropped: number): boolean {
  return r.agreed !== null && r.serverRev > 0 && r.serverRev < dropped;
}

/** Applies the deletions, at rev `dropped`, of `paths`. */
export async function applyDroppedDeletions(
  ctx: EngineContext,
  paths: readonly string[],
  dropped: number,
): Promise<void> {
  if (paths.length === 0) return;
  const applier = new Applier(ctx, new ObjectFetcher(ctx));
  try {
    for (const path of [...paths].sort(comparePaths)) {
      ctx.report.entriesReceived++;
      ctx.report.received.push({ path, kind: "gone" });
      await applier.apply({ kind: "gone", path, rev: dropped }, "merge");
    }
    applier.settleKeptDirs();
    applier.flush();
  } finally {
    applier.finishDirs();
  }
}
