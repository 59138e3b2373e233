/**
 * `GET /v1/workspaces/{ws}/check` (PROTOCOL.md §7.11): whether every object
 * the index names is where it says, and with `deep` whether its bytes still
 * hash to its name. JSON for people and `ferry workspace check`.
 */

/** One thing wrong. `hash` is the object's (hex); `pack` the storage pack the index places it in. */
export type CheckProblem = {
  /**
   * `pack_missing`: the pack the index names is not stored; `pack_short`: it
   * ends before the object's slice; `length_mismatch`: an inline object's
   * bytes are not its recorded size; `hash_mismatch` (deep): the bytes do
   * not hash to the object's name; `pack_length`: a pack in R2 is not the
   * length the index recorded (altered behind the server's back). The
   * server forgets each object it finds so (it answers `has` missing) and
   * names it `lost` from then on, until a host uploads it again.
   */
  readonly kind: "pack_missing" | "pack_short" | "pack_length" | "length_mismatch" | "hash_mismatch" | "lost";
  readonly hash: string;
  readonly pack?: number;
  /** The pack's key in the R2 bucket, for a pack there (PROTOCOL.md §7.9). */
  readonly key?: string;
};

/** One page: the index's figures (the first page), what this page re-hashed, its problems, where the next starts. */
export type CheckPage = {
  readonly workspace: string;
  readonly deep: boolean;
  readonly objects: number;
  readonly packs: number;
  /** Bytes re-hashed by this page (deep only). */
  readonly hashedBytes: number;
  readonly problems: readonly CheckProblem[];
  /** Ask again with `after` = this (a pack id) for the rest; null when done. */
  readonly next: number | null;
};

/** Problems one page lists at most, each kind: a damaged store names its first ones, not millions. */
export const MAX_CHECK_PROBLEMS = 100;

/** `deep` and `after` from the query: `deep=1`, `after` a pack id (digits). Null for a bad value. */
export function decodeCheckQuery(q: URLSearchParams): { deep: boolean; after: number } | { field: string } {
  const deep = q.get("deep");
  if (deep !== null && deep !== "0" && deep !== "1") return { field: "deep" };
  const after = q.get("after") ?? "0";
  if (!/^\d{1,15}$/.test(after)) return { field: "after" };
  return { deep: deep === "1", after: Number(after) };
}
