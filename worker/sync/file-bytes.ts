/**
 * file (GET, PROTOCOL.md §7.4): a file's bytes, streamed from its chunks so
 * the object holds at most one pack (about 1 MiB) at a time, whatever the
 * file's size. The workspace page downloads through it.
 */
import type { FileQuery } from "../../protocol/browse.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { toHex } from "../../protocol/hash.ts";
import { damagedAmong, forgetDamaged } from "./damaged.ts";
import type { Db, SyncContext } from "./db.ts";
import { type EntryRow, rowToEntry } from "./entries.ts";
import type { PackStore } from "./pack-store.ts";
import type { Placement } from "./packs.ts";
import { readPlaced } from "./read-placed.ts";

export interface FileToSend {
  readonly path: string;
  readonly rev: number;
  readonly size: number;
  readonly mtime: number;
  readonly chunks: readonly Uint8Array[];
}

const STATE_COLUMNS = "path, rev, kind, mode, mtime, size, chunks, target, origin";

/**
 * The file state a query names: the path's current state, or with `rev` the
 * state that rev wrote (current or kept in `versions`). `not_found` when
 * there is none or it is not a file; `object_damaged` when its bytes were lost.
 */
export function findFile(db: Db, q: FileQuery): FileToSend | ProtocolError {
  let row = db.exec<EntryRow>(`SELECT ${STATE_COLUMNS} FROM entries WHERE path = ?`, q.path).rows[0];
  if (row !== undefined && q.rev !== null && row.rev !== q.rev) {
    row = db.exec<EntryRow>(`SELECT ${STATE_COLUMNS} FROM versions WHERE path = ? AND rev = ?`, q.path, q.rev).rows[0];
  }
  const at = q.rev === null ? "" : ` at rev ${q.rev}`;
  const details = { path: q.path, ...(q.rev === null ? {} : { rev: q.rev }) };
  if (row === undefined) return new ProtocolError("not_found", `no file ${q.path}${at}`, details);
  const entry = rowToEntry(row);
  if (entry.kind !== "file")
    return new ProtocolError("not_found", `${q.path}${at} is a ${entry.kind}, not a file`, details);
  // Chunks remembered as damaged (damaged.ts) are refused before any byte is sent: the status still says so.
  const lost = damagedAmong(db, entry.chunks);
  if (lost.length > 0) return damagedError(entry.path, lost);
  return { path: entry.path, rev: entry.rev, size: entry.size, mtime: entry.mtime, chunks: entry.chunks };
}

/** The answer to a read of a file whose bytes the server lost (damaged.ts). */
function damagedError(path: string, hashes: readonly Uint8Array[]): ProtocolError {
  return new ProtocolError(
    "object_damaged",
    `the server lost the bytes of ${path}: a host that holds it uploads them again with 'ferry push --heal'`,
    { path, hashes: hashes.map(toHex) },
  );
}

/**
 * The file's bytes as a stream that reads one chunk per pull, keeping the
 * last pack read (consecutive chunks of a file usually share one). A chunk
 * the object no longer holds errors the stream: push refuses entries whose
 * objects are missing, so only a collection racing the download gets there,
 * or a pack damaged behind ferry's back, which is then forgotten
 * (damaged.ts) so that the next read answers `object_damaged` up front.
 */
export function streamChunks(
  { db, now }: Pick<SyncContext, "db" | "now">,
  path: string,
  chunks: readonly Uint8Array[],
  store?: PackStore,
): ReadableStream<Uint8Array> {
  let next = 0;
  let pack: { readonly id: number; readonly bytes: Uint8Array } | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const hash = chunks[next++];
      if (hash === undefined) {
        pack = null;
        controller.close();
        return;
      }
      const placed = db.exec<Placement>(`SELECT pack, offset, size, bytes FROM objects WHERE hash = ?`, hash).rows[0];
      if (placed === undefined) {
        controller.error(new Error("a chunk of this file is no longer stored"));
        return;
      }
      if (placed.pack === null) {
        controller.enqueue(placed.bytes ?? new Uint8Array(0));
        return;
      }
      if (pack?.id !== placed.pack) {
        const row = db.exec<{ bytes: Uint8Array | null }>(`SELECT bytes FROM packs WHERE id = ?`, placed.pack).rows[0];
        if (row === undefined || row.bytes === null) {
          // In R2 (or gone): this chunk's range alone (read-placed.ts), so the object holds one chunk, not the pack.
          const read = ((await readPlaced(db, store, [placed])) as (Uint8Array | null)[])[0];
          if (read === null || read === undefined) {
            forgetDamaged(db, [{ hash, pack: placed.pack }], now());
            controller.error(damagedError(path, [hash]));
          } else controller.enqueue(read);
          return;
        }
        pack = { id: placed.pack, bytes: row.bytes };
      }
      if (placed.offset + placed.size > pack.bytes.byteLength) {
        forgetDamaged(db, [{ hash, pack: placed.pack }], now());
        controller.error(damagedError(path, [hash]));
        return;
      }
      controller.enqueue(pack.bytes.slice(placed.offset, placed.offset + placed.size));
    },
  });
}
