/** has: which of these objects does the server hold? Answers keep input order. */
import { LIMITS } from "./limits.ts";
import { readArray, readBool, readHash, readMap } from "./read.ts";

export interface HasRequest {
  readonly hashes: readonly Uint8Array[];
}

export interface HasResponse {
  /** `have[i]` answers `hashes[i]`. */
  readonly have: readonly boolean[];
}

export function decodeHasRequest(value: unknown): HasRequest {
  const m = readMap(value, "has");
  const hashes = readArray(m.hashes, "hashes", LIMITS.maxHas).map((h, i) => readHash(h, `hashes[${i}]`));
  return { hashes };
}

export function decodeHasResponse(value: unknown): HasResponse {
  const m = readMap(value, "has");
  return { have: readArray(m.have, "have", Number.MAX_SAFE_INTEGER).map((b, i) => readBool(b, `have[${i}]`)) };
}
