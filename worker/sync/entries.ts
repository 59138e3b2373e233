/**
 * The entries table at the storage boundary: rows to typed entries and back.
 * A file's chunk list is stored inline as one blob of concatenated 32-byte
 * hashes, so a file is one row whatever its chunk count.
 */
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { HASH_BYTES, type HashList, splitHashes } from "../../protocol/hash.ts";
import type { PushEntry } from "../../protocol/push.ts";
import { bulkWindows } from "./bulk.ts";
import { type Db, MAX_VALUE_BYTES } from "./db.ts";

/** A path's stored state: its entry, the rev that set it, and the host that wrote it. */
export type StoredEntry = Change & { readonly origin: Uint8Array };

export interface EntryRow {
  [column: string]: string | number | null | Uint8Array;
  path: string;
  rev: number;
  kind: string;
  mode: number | null;
  mtime: number | null;
  size: number | null;
  chunks: Uint8Array | null;
  target: string | null;
  origin: Uint8Array;
}

export const ENTRY_COLUMNS = "path, rev, kind, mode, mtime, size, chunks, target, origin";

/**
 * Chunk lists longer than this stay out of bulk reads: a list may be 2 MB
 * (60,000 chunks), and one statement materializes every row it returns, so
 * a read of thousands of such rows would hold gigabytes in an object that
 * has 128 MB. A bulk read returns such a list as NULL with its length in
 * `chunk_bytes`, and the caller reads it alone where it needs it
 * (withChunkList), within its own byte bound.
 */
export const INLINE_CHUNK_BYTES = 4096;

/** The select list of `chunks` for a bulk read (INLINE_CHUNK_BYTES): the list when short, and its length. */
export function boundedChunks(column = "chunks"): string {
  return `CASE WHEN length(${column}) <= ${INLINE_CHUNK_BYTES} THEN ${column} END AS chunks, length(${column}) AS chunk_bytes`;
}

/** ENTRY_COLUMNS for bulk reads: long chunk lists left out (INLINE_CHUNK_BYTES). */
export const BULK_ENTRY_COLUMNS = `path, rev, kind, mode, mtime, size, ${boundedChunks()}, target, origin`;

/** What a bulk read returns of a row's chunk list (boundedChunks), with the row's key. */
export type BoundedChunksRow = {
  path: string;
  rev: number;
  chunks: Uint8Array | null;
  chunk_bytes: number | null;
};

/** A row of a bulk read: `chunks` is NULL where `chunk_bytes` says a list was left out. */
export interface BulkEntryRow extends EntryRow {
  chunk_bytes: number | null;
}

/** An entry map's fixed CBOR overhead (keys, kind, mode, mtime, size, rev), as the bounds below count it. */
const ENTRY_OVERHEAD = 96;

/** An upper bound on a bulk-read row's CBOR size as an entry: text at 3 bytes a UTF-16 unit, and fixed overhead. */
export function encodedSize(row: BulkEntryRow): number {
  return ENTRY_OVERHEAD + row.path.length * 3 + (row.chunk_bytes ?? 0) * 1.1 + (row.target?.length ?? 0) * 3;
}

/** encodedSize's bound for an entry already read: 35 bytes a chunk hash (its 32 and CBOR's head). */
export function entryEncodedSize(e: Entry): number {
  const chunks = e.kind === "file" ? e.chunks.length * 35 : 0;
  return ENTRY_OVERHEAD + e.path.length * 3 + chunks + (e.kind === "symlink" ? e.target.length * 3 : 0);
}

/** Whether a bulk read left this row's chunk list out. */
export function chunkListLeftOut(row: BoundedChunksRow): boolean {
  return row.chunks === null && (row.chunk_bytes ?? 0) > 0;
}

/**
 * The row with its chunk list, read alone when the bulk read left it out:
 * from `entries` by path, or from `versions` by path and rev.
 */
export function withChunkList<T extends BoundedChunksRow>(db: Db, row: T, table: "entries" | "versions"): T {
  if (!chunkListLeftOut(row)) return row;
  const { rows } =
    table === "entries"
      ? db.exec<{ chunks: Uint8Array | null }>(`SELECT chunks FROM entries WHERE path = ?`, row.path)
      : db.exec<{ chunks: Uint8Array | null }>(
          `SELECT chunks FROM versions WHERE path = ? AND rev = ?`,
          row.path,
          row.rev,
        );
  return { ...row, chunks: rows[0]?.chunks ?? null };
}

/** BULK_ENTRY_COLUMNS qualified by table alias `e`, for joins with json_each (which has a `path` column too). */
const E_BULK_COLUMNS = `e.path, e.rev, e.kind, e.mode, e.mtime, e.size, ${boundedChunks("e.chunks")}, e.target, e.origin`;

export function rowToEntry(row: EntryRow): StoredEntry {
  const { path, rev, origin } = row;
  switch (row.kind) {
    case "file":
      return {
        kind: "file",
        path,
        rev,
        origin,
        mode: row.mode ?? 0,
        mtime: row.mtime ?? 0,
        size: row.size ?? 0,
        chunks: row.chunks === null ? [] : splitHashes(row.chunks),
      };
    case "dir":
      return { kind: "dir", path, rev, origin, mode: row.mode ?? 0, mtime: row.mtime ?? 0 };
    case "symlink":
      return { kind: "symlink", path, rev, origin, target: row.target ?? "" };
    default:
      return { kind: "gone", path, rev, origin };
  }
}

/** The wire form of a stored entry: its change without the origin. */
export function toChange(e: StoredEntry): Change {
  const { origin: _origin, ...change } = e;
  return change;
}

/**
 * Stored states of `paths`, by path; absent paths are not in the map. One
 * statement per ~2 MB of paths, bound as a JSON array. A long chunk list
 * (INLINE_CHUNK_BYTES) is read only when `sameLength` says the caller's
 * list for that path has its length, and is otherwise left empty: the
 * caller (push, comparing stored and pushed states) knows them apart by
 * length already, and so reads no more list bytes than it was sent.
 */
export function readEntries(
  db: Db,
  paths: Iterable<string>,
  sameLength: (path: string, chunkBytes: number) => boolean,
): Map<string, StoredEntry> {
  const out = new Map<string, StoredEntry>();
  for (const json of jsonWindows(paths)) {
    const { rows } = db.exec<BulkEntryRow>(
      `SELECT ${E_BULK_COLUMNS} FROM json_each(?) j CROSS JOIN entries e ON e.path = j.value`,
      json,
    );
    for (const row of rows) {
      const read = chunkListLeftOut(row) && sameLength(row.path, row.chunk_bytes ?? 0);
      out.set(row.path, rowToEntry(read ? withChunkList(db, row, "entries") : row));
    }
  }
  return out;
}

/** JSON arrays of `values`, each under the bound on one SQL value, for `json_each(?)`. */
export function jsonWindows(values: Iterable<unknown>): string[] {
  const out: string[] = [];
  let batch: string[] = [];
  let bytes = 2;
  for (const value of values) {
    const encoded = JSON.stringify(value);
    // UTF-16 length times 3 bounds the UTF-8 length.
    const size = encoded.length * 3 + 1;
    if (batch.length > 0 && bytes + size > MAX_VALUE_BYTES) {
      out.push(`[${batch.join(",")}]`);
      batch = [];
      bytes = 2;
    }
    batch.push(encoded);
    bytes += size;
  }
  if (batch.length > 0) out.push(`[${batch.join(",")}]`);
  return out;
}

/**
 * Writes entries as the current state of their paths, all at `rev` from
 * `origin`, in bulk windows (bulk.ts). A new path costs two rows written:
 * its row and its entries_by_rev index row.
 */
export function writeEntries(db: Db, entries: readonly PushEntry[], rev: number, origin: Uint8Array): void {
  const windows = bulkWindows(
    entries,
    (e) => (e.kind === "file" ? [e.chunks] : []),
    (e, offset) => entryRowFields(e, offset),
  );
  for (const w of windows) {
    db.exec(
      `INSERT INTO entries (${ENTRY_COLUMNS})
       SELECT j.value ->> 'p', ?1, j.value ->> 'k', j.value ->> 'm', j.value ->> 't', j.value ->> 's',
         iif(j.value ->> 'k' = 'file', substr(?3, j.value ->> 'o' + 1, j.value ->> 'n'), NULL), j.value ->> 'l', ?2
       FROM json_each(?4) j WHERE true
       ON CONFLICT (path) DO UPDATE SET rev = excluded.rev, kind = excluded.kind, mode = excluded.mode,
         mtime = excluded.mtime, size = excluded.size, chunks = excluded.chunks, target = excluded.target,
         origin = excluded.origin`,
      rev,
      origin,
      w.blob,
      w.json,
    );
  }
}

/** An entry's bulk row: short keys, and a file's chunk list as a slice of the window's blob. */
function entryRowFields(e: PushEntry, offset: number): Record<string, unknown> {
  switch (e.kind) {
    case "file":
      return { p: e.path, k: e.kind, m: e.mode, t: e.mtime, s: e.size, o: offset, n: e.chunks.byteLength };
    case "dir":
      return { p: e.path, k: e.kind, m: e.mode, t: e.mtime };
    case "symlink":
      return { p: e.path, k: e.kind, l: e.target };
    case "gone":
      return { p: e.path, k: e.kind };
  }
}

/**
 * True when writing `a` over the stored `b` would store the same row: every
 * stored field agrees (revs and origins aside), a directory's mtime included.
 * The host compares states without a directory's mtime (client/common/entry-state.ts).
 */
export function sameStoredFields(a: PushEntry, b: Entry): boolean {
  if (a.kind !== b.kind || a.path !== b.path) return false;
  switch (a.kind) {
    case "file": {
      const f = b as Extract<Entry, { kind: "file" }>;
      return a.mode === f.mode && a.mtime === f.mtime && a.size === f.size && sameChunks(a.chunks, f.chunks);
    }
    case "dir": {
      const d = b as typeof a;
      return a.mode === d.mode && a.mtime === d.mtime;
    }
    case "symlink":
      return a.target === (b as typeof a).target;
    case "gone":
      return true;
  }
}

/** Whether a pushed hash list names the stored chunks, in order: compared in place, no view per hash. */
function sameChunks(list: HashList, hashes: readonly Uint8Array[]): boolean {
  if (list.byteLength !== hashes.length * HASH_BYTES) return false;
  return hashes.every((h, i) => {
    for (let k = 0; k < HASH_BYTES; k++) if (list[i * HASH_BYTES + k] !== h[k]) return false;
    return true;
  });
}
