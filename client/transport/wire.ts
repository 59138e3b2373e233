/**
 * Request bodies as wire maps, for every transport. Entries are rebuilt with
 * only the fields of their kind, so a value that carries more (a `Change`
 * with its `rev`, a record's entry) never leaks extra keys onto the wire.
 * objects/get's hashes are joined into one byte string here, once per call;
 * `has` requests already carry theirs joined.
 */
import { type GetObjectsRequest, getObjectsFields } from "../../protocol/objects.ts";
import type { OpName, OpRequest } from "../../protocol/ops.ts";
import { type PushRequest, pushEntryFields } from "../../protocol/push.ts";

export function requestFields<K extends OpName>(op: K, req: OpRequest<K>): Record<string, unknown> {
  if (op === "push") {
    const p = req as PushRequest;
    return {
      hostId: p.hostId,
      start: p.start,
      end: p.end,
      entries: p.entries.map(pushEntryFields),
      ...(p.objects.length > 0 ? { objects: p.objects.map((o) => ({ hash: o.hash, bytes: o.bytes })) } : {}),
      ...(p.pulled !== undefined ? { pulled: p.pulled } : {}),
      ...(p.pulledId ? { pulledId: p.pulledId } : {}),
    };
  }
  if (op === "getObjects") return getObjectsFields(req as GetObjectsRequest);
  return req as unknown as Record<string, unknown>;
}
