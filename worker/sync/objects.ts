/** objects (upload) and objects/get (download): chunk bytes addressed by SHA-256. */
import { ProtocolError } from "../../protocol/errors.ts";
import { HASH_BYTES, hashesEqual, sha256, toHex } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type {
  GetObjectsRequest,
  GetObjectsResponse,
  ObjectBlob,
  PutObjectsRequest,
  PutObjectsResponse,
} from "../../protocol/objects.ts";
import { bulkWindows } from "./bulk.ts";
import type { Db, SyncContext } from "./db.ts";
import { hashWindows, SORTED_CTE } from "./hash-list.ts";

export async function putObjects(
  { db }: SyncContext,
  req: PutObjectsRequest,
): Promise<PutObjectsResponse | ProtocolError> {
  const refusal = await verifyObjects(req.objects);
  if (refusal) return refusal;
  const stored = db.transaction(() => storeObjects(db, req.objects));
  return { stored, present: req.objects.length - stored };
}

/**
 * Hashes every object and compares it with its claimed hash; called by
 * putObjects and push before anything is stored. One mismatch refuses all.
 */
export async function verifyObjects(objects: readonly ObjectBlob[]): Promise<ProtocolError | null> {
  const actual = await Promise.all(objects.map((o) => sha256(o.bytes)));
  const mismatched = objects.filter((o, i) => !hashesEqual(o.hash, actual[i] as Uint8Array)).map((o) => o.hash);
  if (mismatched.length === 0) return null;
  return new ProtocolError(
    "hash_mismatch",
    `${mismatched.length} object(s) do not match their hash, first ${toHex(mismatched[0] as Uint8Array)}`,
    { hashes: mismatched },
  );
}

/**
 * Stores verified objects, never overwriting bytes already held under a
 * hash. Returns how many were new. Callers run it inside their transaction.
 */
export function storeObjects(db: Db, objects: readonly ObjectBlob[]): number {
  let stored = 0;
  for (const w of bulkWindows(
    objects,
    (o) => [o.hash, o.bytes],
    (o, offset) => [offset, o.bytes.byteLength],
  )) {
    stored += db.exec(
      `INSERT OR IGNORE INTO objects (hash, bytes)
       SELECT substr(?1, j.value ->> 0 + 1, ${HASH_BYTES}), substr(?1, j.value ->> 0 + ${HASH_BYTES + 1}, j.value ->> 1)
       FROM json_each(?2) j WHERE true
       RETURNING 1`,
      w.blob,
      w.json,
    ).rows.length;
  }
  return stored;
}

/**
 * Objects in request order until the next would pass the byte bound (always
 * at least the first held one), and every requested hash not held. Sizes
 * are read first so no bytes past the bound are ever loaded.
 */
export function getObjects({ db }: SyncContext, req: GetObjectsRequest): GetObjectsResponse {
  const budget = Math.min(req.maxBytes ?? LIMITS.maxGetBytes, LIMITS.maxGetBytes);
  const sizes = new Array<number | undefined>(req.hashes.length);
  for (const w of hashWindows(req.hashes)) {
    const { rows } = db.exec<{ i: number; size: number }>(
      `${SORTED_CTE} SELECT w.i AS i, length(o.bytes) AS size FROM sorted w CROSS JOIN objects o ON o.hash = w.hash`,
      w.blob,
      w.count,
    );
    for (const row of rows) sizes[w.offset + row.i] = row.size;
  }

  const chosen: Uint8Array[] = [];
  const missing: Uint8Array[] = [];
  let bytes = 0;
  let full = false;
  req.hashes.forEach((hash, i) => {
    const size = sizes[i];
    if (size === undefined) missing.push(hash);
    else if (!full && (chosen.length === 0 || bytes + size <= budget)) {
      chosen.push(hash);
      bytes += size;
    } else full = true;
  });

  const objects: ObjectBlob[] = [];
  for (const w of hashWindows(chosen)) {
    const { rows } = db.exec<{ i: number; bytes: Uint8Array }>(
      `${SORTED_CTE} SELECT w.i AS i, o.bytes AS bytes FROM sorted w CROSS JOIN objects o ON o.hash = w.hash`,
      w.blob,
      w.count,
    );
    for (const row of rows)
      objects[w.offset + row.i] = { hash: chosen[w.offset + row.i] as Uint8Array, bytes: row.bytes };
  }
  return { objects, missing };
}
