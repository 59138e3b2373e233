/**
 * An upload into R2 packs (PROTOCOL.md §7.9), run by the stateless Worker
 * for objects/put over HTTP (worker/r2/upload-route.ts) and by the object
 * for an upload in a socket frame (objects.ts): verify every chunk, ask
 * which are held, write the rest as packs to R2, and only then record them
 * (r2-record.ts). A chunk that does not match its hash refuses the whole
 * upload before a byte is written, with the code objects/put always used.
 * A retry writes the same packs (same chunks, same order, same key: R2's
 * create-only condition makes it a no-op) and records nothing twice.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { toHex } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { ObjectBlob, PutObjectsResponse } from "../../protocol/objects.ts";
import type { SyncContext } from "./db.ts";
import { probeHashes } from "./hash-list.ts";
import { readEpoch } from "./meta.ts";
import type { PackedUpload, PackStore, StoredPack } from "./pack-store.ts";
import { INLINE_BYTES } from "./packs.ts";
import { historyGone, recordUpload } from "./r2-record.ts";
import { verifyObjects } from "./verify-objects.ts";

/**
 * A pack is closed before it passes this (an object is never split): R2
 * bills a write per object, and a download reads a pack's chunks in a few
 * merged ranges. An upload body's objects fit one (8 MiB; a 16 MiB body
 * made two or three until 2026-12-07): packs of 4 MiB cost the heavy
 * tree's push 0.4 s more of the runtime's CPU, twice the puts.
 */
export const R2_PACK_BYTES = LIMITS.maxBodyBytes;

/** What the object's index answers the ingest's probe: which hashes it holds, and its history (epoch, hex). */
export interface Probed {
  readonly held: readonly boolean[];
  readonly history: string;
}

/** The object, as the ingest asks it: which hashes it holds, and record an upload (r2-record.ts). */
export interface IngestIndex {
  readonly probe: (hashes: readonly Uint8Array[]) => Promise<Probed> | Probed;
  readonly record: (upload: PackedUpload) => Promise<number> | number;
}

/** The index as the object itself asks it (an upload or push in a socket frame: objects.ts, push.ts). */
export function localIndex(ctx: SyncContext): IngestIndex {
  return {
    probe: (hashes) => ({ held: probeHashes(ctx.db, hashes), history: toHex(readEpoch(ctx.db)) }),
    record: (upload) => recordUpload(ctx, upload),
  };
}

export async function ingestObjects(
  store: PackStore,
  index: IngestIndex,
  objects: readonly ObjectBlob[],
): Promise<PutObjectsResponse | ProtocolError> {
  const upload = await packObjects(store, index, objects);
  if (upload instanceof ProtocolError) return upload;
  const stored = await recordOrForget(store, upload, () => index.record(upload));
  return { stored, present: objects.length - stored };
}

/**
 * Runs `record` (an upload's, or a push's that carries `upload`); refused
 * because the workspace was deleted since the probe, it first deletes the
 * packs written for the deleted history: nothing else names them or ever
 * will, and no other history writes under their prefix (r2-record.ts).
 */
export async function recordOrForget<T>(
  store: PackStore,
  upload: PackedUpload,
  record: () => Promise<T> | T,
): Promise<T> {
  try {
    return await record();
  } catch (e) {
    if (historyGone(e)) await store.deletePacks(upload.packs.map((p) => p.key));
    throw e;
  }
}

/**
 * The ingest's first half: verified, probed, the chunks not held written
 * to R2 as packs; what is left is to record them, which an upload does at
 * once (ingestObjects) and a push in its own transaction, only if it
 * commits (push.ts, apply.ts).
 */
export async function packObjects(
  store: PackStore,
  index: Pick<IngestIndex, "probe">,
  objects: readonly ObjectBlob[],
): Promise<PackedUpload | ProtocolError> {
  const refusal = await verifyObjects(objects);
  if (refusal) return refusal;
  const distinct = new Map<string, ObjectBlob>();
  for (const o of objects) if (!distinct.has(toHex(o.hash))) distinct.set(toHex(o.hash), o);
  const candidates = [...distinct.values()];
  const { held, history } = await index.probe(candidates.map((o) => o.hash));
  const fresh = candidates.filter((_, i) => !held[i]);
  const inline = fresh.filter((o) => o.bytes.byteLength <= INLINE_BYTES);
  const groups: ObjectBlob[][] = [];
  let bytes = R2_PACK_BYTES;
  for (const o of fresh) {
    if (o.bytes.byteLength <= INLINE_BYTES) continue;
    if (bytes + o.bytes.byteLength > R2_PACK_BYTES) {
      groups.push([]);
      bytes = 0;
    }
    (groups.at(-1) as ObjectBlob[]).push(o);
    bytes += o.bytes.byteLength;
  }
  // Every pack in R2 before the index names any of them: bytes, then index.
  // Every put settles before a failure is answered: none is left writing after the request ends.
  const settled = await Promise.allSettled(groups.map((g) => store.writePack(g, history)));
  const failed = settled.find((s) => s.status === "rejected");
  if (failed !== undefined) throw failed.reason;
  const packs = settled.map((s) => (s as PromiseFulfilledResult<StoredPack>).value);
  return { packs, inline, hashes: candidates.map((o) => o.hash), history };
}
