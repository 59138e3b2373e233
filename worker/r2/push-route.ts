/**
 * push with a bucket bound (PROTOCOL.md §7.9): a push that carries its
 * missing objects inline (§4.5; one round trip for a small change) has them
 * verified and written to R2 here, like an upload (upload-route.ts), and the
 * object receives the push without them, with the packs to record in the
 * push's own transaction: bytes, then index, then rev, and a push refused
 * (a conflict, bad input) records nothing, as before R2. A push whose
 * objects are refused (hash_mismatch, or the bucket failing) is refused
 * with that, and commits nothing.
 */
import { decodeCbor } from "../../protocol/cbor.ts";
import { decodeWireError, ProtocolError } from "../../protocol/errors.ts";
import { encodeRequest, OPS } from "../../protocol/ops.ts";
import { pushCarriesObjects } from "../../protocol/push.ts";
import { inlineObjectBytes, SMALL_PUSH_BYTES } from "../../protocol/version.ts";
import { packObjects } from "../sync/r2-ingest.ts";
import { historyGone } from "../sync/r2-record.ts";
import { bucketStore } from "./bucket-store.ts";
import { type BucketCall, readBody } from "./read-request.ts";
import { compact, objectIndex } from "./upload-route.ts";

export async function pushThroughPacks(call: BucketCall): Promise<Response> {
  const bytes = await readBody("push", call.body, call.declared, call.reservation);
  // Decoded here only when it carries objects: a push of thousands of entries was decoded twice, here
  // and by the object, the first while the second ran (issue 28).
  const request = pushCarriesObjects(bytes) ? OPS.push.decodeRequest(decodeCbor(bytes)) : null;
  // A small push's objects are kept in the object's SQLite (SMALL_PUSH_BYTES): it goes there whole.
  if (request === null || inlineObjectBytes(request.objects) <= SMALL_PUSH_BYTES) {
    call.reservation?.handOver(); // the object counts the body as it serves it
    return call.stub.serve("push", bytes, call.rights);
  }
  const store = bucketStore(call.bucket, call.workspace, true);
  const packed = await packObjects(store, objectIndex(call.stub), request.objects);
  if (packed instanceof ProtocolError) throw packed;
  const body = encodeRequest("push", { ...request, objects: [] });
  const answer = await call.stub.pushWithPacks(body, compact(packed), call.rights);
  if (answer.status !== 503) return answer;
  // Refused because the workspace was deleted since the probe: its packs are forgotten first (r2-ingest.ts).
  const refused = new Uint8Array(await answer.arrayBuffer());
  const refusal = decodeWireError(decodeCbor(refused));
  if (historyGone(refusal)) await store.deletePacks(packed.packs.map((p) => p.key));
  return new Response(refused, { status: answer.status, headers: answer.headers });
}
