/**
 * Whether a host's saved position can be resumed here: the one rule hello
 * (its `resync`, PROTOCOL.md §4.1) and changes (its `cursor_mismatch`,
 * §4.6) both apply. A position cannot be resumed when it is
 *
 * - in another history: another epoch, or a rev ahead of this one (storage
 *   restored from a backup);
 * - at a rev whose identity is not the host's (restored from an older copy
 *   that then moved on: the same rev numbers name other changes);
 * - older than tombstones the collector dropped (the host would miss those
 *   deletions): past the horizon.
 */
import type { Cursor } from "../../protocol/cursor.ts";
import { hashesEqual } from "../../protocol/hash.ts";
import type { Db } from "./db.ts";
import { missesDroppedTombstones } from "./gc/summary.ts";
import { revIdMatches } from "./history.ts";

/** A host's position: its cursor, and the epoch and rev identity it holds for it, when it sent them. */
export interface Position {
  readonly epoch?: Uint8Array;
  readonly cursor: Cursor;
  readonly revId?: Uint8Array;
}

/** Why a position cannot be resumed, or null when it can. */
export type PositionLost = "other-history" | "other-rev" | "past-horizon" | null;

/**
 * Checks `position` against this workspace's `epoch`, head `rev` and
 * `dropped` (the tombstone horizon). At hello the rev's identity is
 * `required` (a saved position without one past rev 0 cannot be told from
 * another history's); a page of changes checks it only when sent.
 */
export function positionLost(
  db: Db,
  position: Position,
  head: { readonly epoch: Uint8Array; readonly rev: number; readonly dropped: number },
  revId: "required" | "when-sent",
): PositionLost {
  if ((position.epoch !== undefined && !hashesEqual(position.epoch, head.epoch)) || position.cursor.rev > head.rev) {
    return "other-history";
  }
  if (
    (position.revId !== undefined || revId === "required") &&
    !revIdMatches(db, position.cursor.rev, position.revId)
  ) {
    return "other-rev";
  }
  return missesDroppedTombstones(position.cursor, head.dropped) ? "past-horizon" : null;
}
