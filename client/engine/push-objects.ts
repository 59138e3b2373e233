/**
 * The objects of a pack being pushed (push.ts): which chunks its files
 * name (refsOf), which of them the server lacks (probe, with `has`), and
 * their bytes, read back from disk and verified (readObjects), sent inline
 * or uploaded in `objects` batches (upload). A chunk whose bytes no longer
 * match means its file changed since the scan (StaleFile).
 */
import { join } from "node:path";
import { hashesEqual, joinHashes, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { readRange } from "../content/file-chunks.ts";
import { sha256Sync } from "../content/hash.ts";
import type { PathRecord } from "../store/store.ts";
import type { EngineContext } from "./context.ts";
import { OBJECT_OVERHEAD } from "./pack-size.ts";
import { mayHoldObjects, Uploads } from "./uploads.ts";

/** One chunk of a pack's file: where its bytes are, to read them for an upload. */
export interface ChunkRef {
  readonly hash: Uint8Array;
  readonly hex: string;
  readonly record: PathRecord;
  readonly offset: number;
  readonly size: number;
}

/** A file changed between scan and upload: the pack is rebuilt from a fresh scan of it. */
export class StaleFile extends Error {
  constructor(readonly path: string) {
    super(`'${path}' changed during the push`);
  }
}

/**
 * Chunks of the pack's files the server does not hold, each once (those this
 * sync saw held are not asked, nor anything in a workspace that can hold
 * none, uploads.ts).
 */
export async function probe(ctx: EngineContext, refs: ChunkRef[]): Promise<ChunkRef[]> {
  const unknown = refs.filter((r) => !ctx.heldChunks.has(r.hex));
  if (!mayHoldObjects(ctx)) return unknown;
  const missing: ChunkRef[] = [];
  for (let at = 0; at < unknown.length; at += ctx.server.limits.maxHas) {
    const window = unknown.slice(at, at + ctx.server.limits.maxHas);
    const { have } = await ctx.call("has", { hashes: joinHashes(window.map((r) => r.hash)) });
    window.forEach((r, i) => {
      if (have[i] !== 1) missing.push(r);
    });
  }
  return missing;
}

/** The chunks the pack's files name, each once, with where its bytes are in its file. */
export function refsOf(pack: PathRecord[]): ChunkRef[] {
  const seen = new Set<string>();
  const refs: ChunkRef[] = [];
  for (const record of pack) {
    if (record.entry.kind !== "file") continue;
    let offset = 0;
    record.entry.chunks.forEach((hash, i) => {
      const size = record.sizes[i] ?? 0;
      const hex = toHex(hash);
      if (!seen.has(hex)) {
        seen.add(hex);
        refs.push({ hash, hex, record, offset, size });
      }
      offset += size;
    });
  }
  return refs;
}

/**
 * Uploads in `objects` batches bounded by count and bytes, several in flight
 * (uploads.ts): each batch is read from disk while the ones before it are on
 * the wire.
 */
export async function upload(ctx: EngineContext, refs: ChunkRef[], budget: number, probed: boolean): Promise<void> {
  const { maxObjects } = ctx.server.limits;
  const uploads = new Uploads(ctx, probed);
  ctx.progress.begin(
    "upload",
    refs.reduce((n, r) => n + r.size, 0),
  );
  try {
    for (let at = 0; at < refs.length; ) {
      let bytes = 0;
      let end = at;
      while (
        end < refs.length &&
        end - at < maxObjects &&
        (end === at || bytes + (refs[end] as ChunkRef).size + OBJECT_OVERHEAD <= budget)
      ) {
        bytes += (refs[end] as ChunkRef).size + OBJECT_OVERHEAD;
        end++;
      }
      // Waits for room first, so that at most the window's bytes are read ahead.
      await uploads.whenRoom(bytes);
      await uploads.send(readObjects(ctx, refs.slice(at, end)));
      at = end;
    }
    await uploads.drain();
  } finally {
    // A batch that failed or a file that changed ends this upload: the batches still out finish first.
    await uploads.idle();
    ctx.progress.end("upload");
  }
}

/** Reads and verifies chunk bytes; a chunk that no longer matches means its file changed. */
export function readObjects(ctx: EngineContext, refs: ChunkRef[]): ObjectBlob[] {
  return refs.map((r) => {
    let bytes: Uint8Array;
    try {
      bytes = readRange(join(ctx.root, r.record.entry.path), r.offset, r.size);
    } catch {
      throw new StaleFile(r.record.entry.path);
    }
    if (bytes.byteLength !== r.size || !hashesEqual(sha256Sync(bytes), r.hash))
      throw new StaleFile(r.record.entry.path);
    return { hash: r.hash, bytes };
  });
}
