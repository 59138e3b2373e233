/**
 * Request bodies as the transports send them: the wire maps of
 * protocol/ops.ts's REQUEST_ENCODERS, except an upload, written around its
 * chunk bytes instead of copied into one body.
 */
import { encodeCbor } from "../../protocol/cbor.ts";
import { CborParts } from "../../protocol/cbor-parts.ts";
import { type PutObjectsRequest, writePutObjectsRequest } from "../../protocol/objects.ts";
import { type OpName, type OpRequest, REQUEST_ENCODERS } from "../../protocol/ops.ts";

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
  const body = encodeCbor(REQUEST_ENCODERS[op](req));
  return { parts: [body], byteLength: body.byteLength };
}

/**
 * A socket frame `{id, op, body}` (PROTOCOL.md §8.1). An upload's frame is
 * written to its exact size around its chunk bytes: encoding it whole grew
 * a buffer up to four times the frame's size and copied into it as it grew.
 */
export function requestFrame<K extends OpName>(id: number, op: K, req: OpRequest<K>): Uint8Array {
  if (op !== "putObjects") return encodeCbor({ id, op, body: REQUEST_ENCODERS[op](req) });
  const w = new CborParts().map(3).text("id").uint(id).text("op").text(op).text("body");
  return writePutObjectsRequest(w, req as PutObjectsRequest).toBytes();
}
