/**
 * Request bodies as wire maps, for every transport. Entries are rebuilt with
 * only the fields of their kind, so a value that carries more (a `Change`
 * with its `rev`, a record's entry) never leaks extra keys onto the wire.
 * objects/get's hashes are joined into one byte string here, once per call;
 * `has` requests already carry theirs joined.
 */
import { encodeCbor } from "../../protocol/cbor.ts";
import { CborParts } from "../../protocol/cbor-parts.ts";
import {
  type GetObjectsRequest,
  getObjectsFields,
  type PutObjectsRequest,
  writePutObjectsRequest,
} from "../../protocol/objects.ts";
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

/**
 * A request body as buffers, for a transport that sends a list (HTTP): an
 * upload's chunk bytes are referenced, not copied into one body; every other
 * request is one buffer.
 */
export function requestBody<K extends OpName>(
  op: K,
  req: OpRequest<K>,
): { readonly parts: Uint8Array[]; readonly byteLength: number } {
  if (op === "putObjects") return writePutObjectsRequest(new CborParts(), req as PutObjectsRequest).finish();
  const body = encodeCbor(requestFields(op, req));
  return { parts: [body], byteLength: body.byteLength };
}

/**
 * A socket frame `{id, op, body}` (PROTOCOL.md §8.1). An upload's frame is
 * written to its exact size around its chunk bytes: encoding it whole grew
 * a buffer up to four times the frame's size and copied into it as it grew.
 */
export function requestFrame<K extends OpName>(id: number, op: K, req: OpRequest<K>): Uint8Array {
  if (op !== "putObjects") return encodeCbor({ id, op, body: requestFields(op, req) });
  const w = new CborParts().map(3).text("id").uint(id).text("op").text(op).text("body");
  return writePutObjectsRequest(w, req as PutObjectsRequest).toBytes();
}
