/** has: which of these objects does the server hold? Answers keep input order. */
import { ProtocolError } from "./errors.ts";
import type { HashList } from "./hash.ts";
import { LIMITS } from "./limits.ts";
import { readBytes, readHashList, readMap } from "./read.ts";

export interface HasRequest {
  /** The hashes to probe, concatenated (`joinHashes`), at most `maxHas`. */
  readonly hashes: HashList;
}

export interface HasResponse {
  /**
   * One byte per hash asked: `have[i]` is 1 when the i-th hash is held, 0
   * when not. (A byte string, not a bitmap: at 1/32 of the request it costs
   * nothing worth packing, and any client reads it without bit order rules.)
   */
  readonly have: Uint8Array;
}

export function decodeHasRequest(value: unknown): HasRequest {
  return { hashes: readHashList(readMap(value, "has").hashes, "hashes", LIMITS.maxHas) };
}

export function decodeHasResponse(value: unknown): HasResponse {
  const have = readBytes(readMap(value, "has").have, "have");
  const bad = have.findIndex((b) => b > 1);
  if (bad !== -1) throw new ProtocolError("bad_request", `have[${bad}]: expected 0 or 1`, { field: "have" });
  return { have };
}
