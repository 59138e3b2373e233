/**
 * The object's storage cap (protocol/capacity.ts): an upload or push that
 * brings new object bytes past it is refused with `workspace_full` and
 * changes nothing. What counts is what the object's storage holds (Durable
 * Object SQLite's database size, which shrinks as the collector frees
 * pages), plus the new bytes. A push or upload that brings no new bytes is
 * never refused: deleting is how a full workspace makes room.
 */
import { DEFAULT_STORAGE_CAP, parseByteSize, STORAGE_CAP_VAR } from "../../protocol/capacity.ts";
import { ProtocolError } from "../../protocol/errors.ts";

/** The object's storage, as the cap sees it (worker/do/workspace.ts binds it to its SQLite). */
export interface Capacity {
  /** Bytes the object's storage holds now. */
  readonly usedBytes: () => number;
  /** The cap in force, or why it cannot be read (a misconfigured variable). */
  readonly capBytes: () => number | ProtocolError;
}

export type CapacityVars = { readonly [STORAGE_CAP_VAR]?: string | undefined };

/**
 * The cap the variable sets, the default when unset. A value that is not a
 * byte size is `unavailable` naming the variable: storing past a guessed cap
 * could fill the object, so uploads wait until it is fixed.
 */
export function readStorageCap(vars: CapacityVars): number | ProtocolError {
  const text = vars[STORAGE_CAP_VAR];
  if (text === undefined || text.trim() === "") return DEFAULT_STORAGE_CAP;
  return (
    parseByteSize(text) ??
    new ProtocolError(
      "unavailable",
      `server misconfigured: ${STORAGE_CAP_VAR}='${text}' is not a byte size (a number, or with KB, MB, GB, KiB, MiB or GiB)`,
      { variable: STORAGE_CAP_VAR },
    )
  );
}

/** Throws `workspace_full` (or the cap's misconfiguration) when `adding` new bytes do not fit; inside the caller's transaction, so it rolls back. */
export function ensureRoom(capacity: Capacity | undefined, adding: number): void {
  if (capacity === undefined || adding === 0) return;
  const cap = capacity.capBytes();
  if (cap instanceof ProtocolError) throw cap;
  const used = capacity.usedBytes();
  if (used + adding <= cap) return;
  throw new ProtocolError(
    "workspace_full",
    `the workspace's storage holds ${used} of its ${cap}-byte cap (FERRY_STORAGE_CAP) and ${adding} new bytes do not fit; deleted files free theirs once the collection drops them`,
    { usedBytes: used, capBytes: cap, addingBytes: adding },
  );
}
