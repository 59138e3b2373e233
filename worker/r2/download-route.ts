/**
 * objects/get with a bucket bound (PROTOCOL.md §7.9): the object answers
 * where the objects are (worker/sync/locate.ts), under the bounds it has
 * always applied, and the Worker reads the R2 ranges itself (adjacent ones
 * merged, bucket-store.ts) and answers exactly as the object would. When
 * one lies in a pack in SQLite (a workspace older than its bucket) the
 * object answers the whole request itself, as before R2.
 */
import { CBOR_CONTENT_TYPE } from "../../protocol/cbor.ts";
import { joinHashes } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { OPS } from "../../protocol/ops.ts";
import { sentBody } from "../do/answer-room.ts";
import { letGoOf } from "../do/reclaim.ts";
import type { ByteRange } from "../sync/pack-store.ts";
import { bucketStore } from "./bucket-store.ts";
import { type BucketCall, readRequest } from "./read-request.ts";

export async function downloadFromPacks({
  bucket,
  workspace,
  stub,
  body,
  declared,
  rights,
  reservation,
}: BucketCall): Promise<Response> {
  const { bytes, request } = await readRequest("getObjects", body, declared, reservation);
  const located = await stub.locateObjects(joinHashes(request.hashes), request.maxBytes);
  if (located === null) {
    reservation?.handOver(); // the object counts the body as it serves it
    return stub.serve("getObjects", bytes, rights);
  }

  const byKey = new Map<string, { at: number; pack: number; range: ByteRange }[]>();
  const found = new Map<number, Uint8Array>();
  for (const o of located.objects) {
    if ("bytes" in o) found.set(o.at, o.bytes);
    else {
      const list = byKey.get(o.key) ?? [];
      list.push({ at: o.at, pack: o.pack, range: { offset: o.offset, size: o.size } });
      byKey.set(o.key, list);
    }
  }
  const store = bucketStore(bucket, workspace, false);
  const gone: { at: number; pack: number }[] = [];
  await Promise.all(
    [...byKey].map(async ([key, list]) => {
      const read = await store.readRanges(
        key,
        list.map((l) => l.range),
      );
      // The index named this pack a moment ago. The collector deletes a pack's bytes only after its rows,
      // and only once it has been condemned a pack grace (PROTOCOL.md §7.9): its objects were garbage
      // by then, deleted since, and are answered missing as they would be a moment later. Rows that
      // still name the pack name bytes removed or cut short behind ferry's back: the object forgets
      // those (worker/sync/damaged.ts), and they are answered missing too.
      if (read === null) {
        for (const l of list) gone.push({ at: l.at, pack: l.pack });
        return;
      }
      list.forEach((l, i) => {
        found.set(l.at, read[i] as Uint8Array);
      });
    }),
  );
  if (gone.length > 0) {
    await stub.forgetDamaged(
      joinHashes(gone.map((g) => request.hashes[g.at] as Uint8Array)),
      gone.map((g) => g.pack),
    );
  }
  const objects: ObjectBlob[] = located.objects
    .filter((o) => found.has(o.at))
    .map((o) => ({ hash: request.hashes[o.at] as Uint8Array, bytes: found.get(o.at) as Uint8Array }));
  const missing = [...located.missing, ...gone.map((g) => g.at)].map((at) => request.hashes[at] as Uint8Array);
  const answer = OPS.getObjects.encodeResponse({ objects, missing });
  // The ranges it was made of are garbage now (worker/do/reclaim.ts); the answer once sent, its room kept till then.
  letGoOf(answer.byteLength);
  const room = reservation?.keepAnswer() ?? { renew() {}, end() {} };
  return new Response(sentBody(answer, room), { headers: { "content-type": CBOR_CONTENT_TYPE } });
}
