/** Every upload's first step (objects/put, push, the R2 ingest): the bytes must be what their hash names. */
import { ProtocolError } from "../../protocol/errors.ts";
import { hashesEqual, sha256, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";

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
