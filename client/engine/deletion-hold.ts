/**
 * The hold a watch puts on its own syncs while deletions are heard on disk
 * (watch-queue.ts): a folder being deleted or emptied is then seen whole.
 */
import { nowMs } from "../common/clock.ts";

/**
 * Deletions heard on disk hold the watch's syncs until none has come for
 * this long (at most DELETE_MAX_MS): a folder being deleted (`rm -rf` of
 * the root, its `.ferry/` among the rest) or emptied is then seen whole,
 * gone (store/root-identity.ts) or a mass deletion (mass-delete.ts), rather
 * than pushed a settled burst at a time while it goes.
 */
const DELETE_QUIET_MS = 500;
const DELETE_MAX_MS = 30_000;

export class DeletionHold {
  /** When the last deletion was heard, and the first of its run. */
  private last = Number.NEGATIVE_INFINITY;
  private since = Number.NEGATIVE_INFINITY;

  /** A path was deleted on disk. */
  heard(): void {
    const now = nowMs();
    if (now - this.last >= DELETE_QUIET_MS) this.since = now;
    this.last = now;
  }

  /** How long the next own sync waits for deletions to settle; 0 once they have (or waited DELETE_MAX_MS). */
  waitMs(): number {
    const now = nowMs();
    if (now - this.since >= DELETE_MAX_MS) return 0;
    return Math.max(0, DELETE_QUIET_MS - (now - this.last));
  }
}
