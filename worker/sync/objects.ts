/** objects (upload) and objects/get (download): chunk bytes addressed by SHA-256. */
import type { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type {
  GetObjectsRequest,
  GetObjectsResponse,
  ObjectBlob,
  PutObjectsRequest,
  PutObjectsResponse,
} from "../../protocol/objects.ts";
import { type FoundDamaged, forgetDamaged } from "./damaged.ts";
import type { Db, SyncContext } from "./db.ts";
import { hashWindows, SORTED_CTE } from "./hash-list.ts";
import { type Placement, storeObjects } from "./packs.ts";
import { ingestObjects, localIndex } from "./r2-ingest.ts";
import { readPlaced } from "./read-placed.ts";
import { verifyObjects } from "./verify-objects.ts";

export async function putObjects(
  ctx: SyncContext,
  req: PutObjectsRequest,
): Promise<PutObjectsResponse | ProtocolError> {
  const { db, now, onWrite, capacity, packStore } = ctx;
  if (packStore?.takesUploads) {
    // An upload the Worker did not take (a socket frame from a host without `http-uploads`): the same
    // ingest, run by the object (PROTOCOL.md §7.9).
    ctx.onIngest?.();
    return ingestObjects(packStore, localIndex(ctx), req.objects);
  }
  const refusal = await verifyObjects(req.objects);
  if (refusal) return refusal;
  const stored = db.transaction(() => {
    // Nothing names them yet: they stay for the upload grace (worker/sync/retention.ts), counted
    // again from now for those already held.
    const fresh = storeObjects(db, req.objects, now(), { restartGrace: true, capacity });
    if (fresh > 0) onWrite?.([]);
    return fresh;
  });
  return { stored, present: req.objects.length - stored };
}

/** How many packs one objects/get reads at most: bounds the bytes read for an answer (worker/sync/packs.ts). */
export const MAX_PACKS_PER_GET = 32;

/**
 * Objects in request order until the next would pass the byte bound or
 * need a pack past MAX_PACKS_PER_GET (always at least the first held one),
 * and every requested hash not held. Sizes and packs are read from the
 * small index first, so no bytes past the bounds are ever loaded.
 */
export async function getObjects(
  { db, packStore, now }: SyncContext,
  req: GetObjectsRequest,
): Promise<GetObjectsResponse> {
  const { chosen, placements, missing } = chooseObjects(db, req);
  const read = await readPlaced(db, packStore, placements);
  const objects: ObjectBlob[] = [];
  const damaged: FoundDamaged[] = [];
  chosen.forEach((hash, i) => {
    const bytes = read[i];
    if (bytes === null || bytes === undefined) damaged.push({ hash, pack: (placements[i] as Placement).pack });
    else objects.push({ hash, bytes });
  });
  // Bytes gone behind ferry's back: forgotten (a host's next upload stores them anew) and answered
  // missing, as the object now holds them; the host names them `object_damaged` (damaged.ts).
  if (damaged.length > 0) forgetDamaged(db, damaged, now());
  return { objects, missing: [...missing, ...damaged.map((d) => d.hash)] };
}

/** What one objects/get answers (getObjects), read from the index alone: the objects chosen and where, and the hashes not held. */
export interface Chosen {
  readonly chosen: Uint8Array[];
  readonly placements: Placement[];
  readonly missing: Uint8Array[];
}

export function chooseObjects(db: Db, req: GetObjectsRequest): Chosen {
  const budget = Math.min(req.maxBytes ?? LIMITS.maxGetBytes, LIMITS.maxGetBytes);
  const placed = new Array<Placement | undefined>(req.hashes.length);
  for (const w of hashWindows(req.hashes)) {
    const { rows } = db.exec<{ i: number } & Placement>(
      `${SORTED_CTE} SELECT w.i AS i, o.pack AS pack, o.offset AS offset, o.size AS size, o.bytes AS bytes
       FROM sorted w CROSS JOIN objects o ON o.hash = w.hash`,
      w.blob,
      w.count,
    );
    for (const row of rows) placed[w.offset + row.i] = row;
  }

  const chosen: Uint8Array[] = [];
  const placements: Placement[] = [];
  const packs = new Set<number>();
  const missing: Uint8Array[] = [];
  let bytes = 0;
  let full = false;
  req.hashes.forEach((hash, i) => {
    const p = placed[i];
    if (p === undefined) {
      missing.push(hash);
      return;
    }
    if (full) return;
    const fits = bytes + p.size <= budget && (p.pack === null || packs.has(p.pack) || packs.size < MAX_PACKS_PER_GET);
    if (chosen.length > 0 && !fits) {
      full = true;
      return;
    }
    chosen.push(hash);
    placements.push(p);
    if (p.pack !== null) packs.add(p.pack);
    bytes += p.size;
  });
  return { chosen, placements, missing };
}
