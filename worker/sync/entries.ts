/**
 * The entries table at the storage boundary: rows to typed entries and back.
 * A file's chunk list is stored inline as one blob of concatenated 32-byte
 * hashes, so a file is one row whatever its chunk count.
 */
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { HASH_BYTES, hashesEqual, splitHashes } from "../../protocol/hash.ts";
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
/** The same columns qualified by table alias `e`, for joins with json_each (which has a `path` column too). */
const E_COLUMNS = ENTRY_COLUMNS.split(", ")
  .map((c) => `e.${c}`)
  .join(", ");

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
 * statement per ~2 MB of paths, bound as a JSON array.
 */
export function readEntries(db: Db, paths: Iterable<string>): Map<string, StoredEntry> {
  const out = new Map<string, StoredEntry>();
  for (const json of jsonWindows(paths)) {
    const { rows } = db.exec<EntryRow>(
      `SELECT ${E_COLUMNS} FROM json_each(?) j CROSS JOIN entries e ON e.path = j.value`,
      json,
    );
    for (const row of rows) out.set(row.path, rowToEntry(row));
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
export function writeEntries(db: Db, entries: readonly Entry[], rev: number, origin: Uint8Array): void {
  const windows = bulkWindows(
    entries,
    (e) => (e.kind === "file" ? e.chunks : []),
    (e, offset) => entryFields(e, offset),
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
function entryFields(e: Entry, offset: number): Record<string, unknown> {
  switch (e.kind) {
    case "file":
      return { p: e.path, k: e.kind, m: e.mode, t: e.mtime, s: e.size, o: offset, n: e.chunks.length * HASH_BYTES };
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
 * The host compares states without a directory's mtime (client/entry-state.ts).
 */
export function sameStoredFields(a: Entry, b: Entry): boolean {
  if (a.kind !== b.kind || a.path !== b.path) return false;
  switch (a.kind) {
    case "file": {
      const f = b as typeof a;
      return (
        a.mode === f.mode &&
        a.mtime === f.mtime &&
        a.size === f.size &&
        a.chunks.length === f.chunks.length &&
        a.chunks.every((h, i) => hashesEqual(h, f.chunks[i] as Uint8Array))
      );
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
