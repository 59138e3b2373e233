/**
 * Bulk writes: many rows bound as two values, a JSON array of their small
 * fields and one blob of their bytes (chunk hashes, object bytes) that each
 * JSON row addresses by offset and length. One statement per ~2 MB of rows,
 * where 100 bound parameters would allow 11 entries or 50 objects: a
 * 10,000-entry pack costs a handful of statements instead of 900.
 */
import { MAX_VALUE_BYTES } from "./db.ts";

export interface BulkWindow {
  /** JSON array of the rows' fields, for `json_each(?)`. */
  readonly json: string;
  /** The rows' bytes, concatenated; a JSON row names its slice by offset and length. */
  readonly blob: Uint8Array;
}

/**
 * Splits `items` into windows whose JSON and blob each stay under the bound
 * on one SQL value. `fields(item, offset)` gets the item's byte offset in
 * its window's blob. An item whose bytes alone pass the bound is the
 * caller's bug: callers bound objects and chunk lists before this.
 */
export function bulkWindows<T>(
  items: readonly T[],
  bytesOf: (item: T) => readonly Uint8Array[],
  fields: (item: T, offset: number) => unknown,
): BulkWindow[] {
  const out: BulkWindow[] = [];
  let rows: string[] = [];
  let parts: Uint8Array[] = [];
  let jsonBytes = 2;
  let blobBytes = 0;
  const flush = () => {
    const blob = new Uint8Array(blobBytes);
    let at = 0;
    for (const part of parts) {
      blob.set(part, at);
      at += part.byteLength;
    }
    out.push({ json: `[${rows.join(",")}]`, blob });
    rows = [];
    parts = [];
    jsonBytes = 2;
    blobBytes = 0;
  };
  for (const item of items) {
    const bytes = bytesOf(item);
    const length = bytes.reduce((n, b) => n + b.byteLength, 0);
    if (length > MAX_VALUE_BYTES) throw new Error(`bulk row of ${length} bytes passes the SQL value bound`);
    if (rows.length > 0 && blobBytes + length > MAX_VALUE_BYTES) flush();
    let row = JSON.stringify(fields(item, blobBytes));
    // UTF-16 length times 3 bounds the UTF-8 length.
    if (rows.length > 0 && jsonBytes + row.length * 3 + 1 > MAX_VALUE_BYTES) {
      flush();
      row = JSON.stringify(fields(item, 0));
    }
    rows.push(row);
    parts.push(...bytes);
    jsonBytes += row.length * 3 + 1;
    blobBytes += length;
  }
  if (rows.length > 0) flush();
  return out;
}
