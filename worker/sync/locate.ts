/**
 * objects/get's answer as locations (PROTOCOL.md §7.9), for the Worker to
 * read from R2 itself (worker/r2/download-route.ts): the objects getObjects
 * would answer, under the same bounds, each as its inline bytes or its
 * pack's key and slice. Null when one lies in a pack in SQLite: the object
 * then answers the request itself, as before R2.
 */
import type { GetObjectsRequest } from "../../protocol/objects.ts";
import type { Db } from "./db.ts";
import { chooseObjects } from "./objects.ts";

/** An object by its position in the request: its bytes (inline), or where they are in R2. */
export type Location =
  | { readonly at: number; readonly bytes: Uint8Array }
  | {
      readonly at: number;
      /** The pack's id, which a read that finds its bytes gone names to the object (damaged.ts). */
      readonly pack: number;
      readonly key: string;
      readonly offset: number;
      readonly size: number;
    };

/**
 * Positions, not hashes, cross the RPC: the hashes are views of the
 * request's buffer, and RPC would send the whole buffer with each.
 */
export interface Located {
  readonly objects: Location[];
  /** Positions of the requested hashes not held, in request order. */
  readonly missing: number[];
}

export function locateObjects(db: Db, req: GetObjectsRequest): Located | null {
  const { chosen, placements, missing } = chooseObjects(db, req);
  const position = new Map(req.hashes.map((h, i) => [h, i]));
  const ids = [...new Set(placements.flatMap((p) => (p.pack === null ? [] : [p.pack])))];
  const keys = new Map(
    db
      .exec<{ id: number; r2_key: string | null }>(
        `SELECT id, r2_key FROM packs WHERE id IN (SELECT value FROM json_each(?))`,
        JSON.stringify(ids),
      )
      .rows.map((r) => [r.id, r.r2_key]),
  );
  const objects: Location[] = [];
  for (const [i, p] of placements.entries()) {
    const at = position.get(chosen[i] as Uint8Array) as number;
    if (p.pack === null) {
      objects.push({ at, bytes: p.bytes ?? new Uint8Array(0) });
      continue;
    }
    const key = keys.get(p.pack);
    if (key === undefined || key === null) return null;
    objects.push({ at, pack: p.pack, key, offset: p.offset, size: p.size });
  }
  return { objects, missing: missing.map((h) => position.get(h) as number) };
}
