/** has: which of these objects are stored? Two statements for 100,000 hashes (see hash-list.ts). */
import type { HasRequest, HasResponse } from "../../protocol/has.ts";
import type { SyncContext } from "./db.ts";
import { probeHashes } from "./hash-list.ts";

export function has({ db }: SyncContext, req: HasRequest): HasResponse {
  return { have: probeHashes(db, req.hashes) };
}
