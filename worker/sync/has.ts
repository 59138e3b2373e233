/** has: which of these objects are stored? Two statements for 100,000 hashes (see hash-list.ts). */
import type { HasRequest, HasResponse } from "../../protocol/has.ts";
import type { SyncContext } from "./db.ts";
import { probeHashList } from "./hash-list.ts";

/** The request's hash list is bound as it arrived, and the answer goes out as it is built: one byte per hash. */
export function has({ db }: SyncContext, req: HasRequest): HasResponse {
  return { have: probeHashList(db, req.hashes) };
}
