/**
 * objects/put with a bucket bound (PROTOCOL.md §7.9): the stateless Worker
 * takes the upload, so the object never touches its bytes. It reads and
 * decodes the body as the object would (the same limits and refusals),
 * then runs the ingest (worker/sync/r2-ingest.ts): verify every chunk,
 * probe the object's index, write packs to R2, and only then ask the
 * object to record them. The answer is the one objects/put always gave.
 */
import { CBOR_CONTENT_TYPE } from "../../protocol/cbor.ts";
import { decodeWireError, ProtocolError } from "../../protocol/errors.ts";
import { joinHashes } from "../../protocol/hash.ts";
import { OPS } from "../../protocol/ops.ts";
import type { PackedUpload, StoredPack } from "../sync/pack-store.ts";
import { type IngestIndex, ingestObjects } from "../sync/r2-ingest.ts";

import { bucketStore } from "./bucket-store.ts";
import { type BucketCall, readRequest } from "./read-request.ts";

export async function uploadToPacks({
  bucket,
  workspace,
  stub,
  body,
  declared,
  reservation,
}: BucketCall): Promise<Response> {
  const { request } = await readRequest("putObjects", body, declared, reservation);
  const answer = await ingestObjects(bucketStore(bucket, workspace, true), objectIndex(stub), request.objects);
  if (answer instanceof ProtocolError) throw answer;
  return new Response(OPS.putObjects.encodeResponse(answer), { headers: { "content-type": CBOR_CONTENT_TYPE } });
}

/** The object's index as the ingest asks it, over RPC (the object's probeObjects and recordUpload). */
export function objectIndex(stub: BucketCall["stub"]): IngestIndex {
  return {
    probe: async (hashes) => {
      const { held, history } = await stub.probeObjects(joinHashes(hashes));
      return { held: Array.from(held, (b) => b === 1), history };
    },
    record: async (upload) => {
      const recorded = await stub.recordUpload(compact(upload));
      if (typeof recorded === "number") return recorded;
      throw decodeWireError(recorded) ?? new ProtocolError("internal", "internal error");
    },
  };
}

/**
 * The upload with every hash and inline chunk copied out of the request
 * body: RPC serializes a view's whole buffer, and these are views of the
 * body (up to maxBodyBytes) the object must never receive.
 */
export function compact(upload: PackedUpload): PackedUpload {
  const pack = (p: StoredPack): StoredPack => ({
    key: p.key,
    size: p.size,
    members: p.members.map((m) => ({ hash: m.hash.slice(), offset: m.offset, size: m.size })),
  });
  return {
    packs: upload.packs.map(pack),
    inline: upload.inline.map((o) => ({ hash: o.hash.slice(), bytes: o.bytes.slice() })),
    hashes: upload.hashes.map((h) => h.slice()),
    history: upload.history,
  };
}
