/**
 * Hash lists bound as one blob: the hashes concatenated, split back into rows
 * in SQL by a recursive CTE. A probe of 100,000 hashes costs two statements
 * (60,000 hashes, 1.9 MB, per statement) instead of 1,000 windows of 100
 * bound parameters; see bench/sqlite/has-strategies.test.ts for the
 * measurement against windows and a JSON parameter.
 *
 * The wire carries hash lists in this very form (protocol/hash.ts), so a
 * request's list is bound as windows of the request's own bytes: no copy,
 * no object per hash.
 */
import { HASH_BYTES, type HashList, joinHashes } from "../../protocol/hash.ts";
import { type Db, MAX_VALUE_BYTES } from "./db.ts";
import { seekOrder } from "./seek-order.ts";

export const HASHES_PER_STATEMENT = Math.floor(MAX_VALUE_BYTES / HASH_BYTES / 1000) * 1000;

export interface HashWindow {
  /** Index of the window's first hash in the whole list. */
  readonly offset: number;
  readonly count: number;
  readonly blob: Uint8Array;
}

/** A list as it came off the wire (`has`), or one hash each (objects/get's views, push's chunks). */
export type HashSource = HashList | readonly Uint8Array[];

export function hashWindows(hashes: HashSource): HashWindow[] {
  const list = hashes instanceof Uint8Array ? hashes : asList(hashes);
  const total = list.byteLength / HASH_BYTES;
  const out: HashWindow[] = [];
  for (let offset = 0; offset < total; offset += HASHES_PER_STATEMENT) {
    const count = Math.min(HASHES_PER_STATEMENT, total - offset);
    out.push({ offset, count, blob: list.subarray(offset * HASH_BYTES, (offset + count) * HASH_BYTES) });
  }
  return out;
}

/**
 * One hash each as one list. objects/get's decoder hands views that lie back
 * to back in the request body (protocol/objects.ts): those are the list
 * already, taken as they lie. Anything else (push's chunk lists) is joined.
 */
function asList(hashes: readonly Uint8Array[]): HashList {
  const first = hashes[0];
  if (first === undefined) return new Uint8Array(0);
  const start = first.byteOffset;
  const contiguous = hashes.every(
    (h, i) => h.buffer === first.buffer && h.byteOffset === start + i * HASH_BYTES && h.byteLength === HASH_BYTES,
  );
  return contiguous ? new Uint8Array(first.buffer, start, hashes.length * HASH_BYTES) : joinHashes(hashes);
}

/**
 * `wanted(i, hash)`: the `?2` hashes in blob `?1`, numbered from 0. Callers
 * write `wanted CROSS JOIN objects` so SQLite walks the list and seeks the
 * objects primary key once per hash, never the other way round.
 */
export const WANTED_CTE = `WITH RECURSIVE
  n(i) AS (SELECT 0 WHERE ?2 > 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?2),
  wanted(i, hash) AS (SELECT i, substr(?1, i * ${HASH_BYTES} + 1, ${HASH_BYTES}) FROM n)`;

/**
 * `sorted(i, hash)`: `wanted` in hash order. Seeking the objects key in
 * order walks its B-tree pages once, front to back; seeking in random order
 * (hashes are random) misses the page cache on most lookups. Measured on a
 * probe of 100,000: 440 ms of the object's CPU unsorted, 240 ms sorted.
 * objects/get uses it; probeHashList sorts in JS instead (seek-order.ts).
 */
export const SORTED_CTE = `${WANTED_CTE},
  sorted(i, hash) AS MATERIALIZED (SELECT i, hash FROM wanted ORDER BY hash)`;

/**
 * Which of `hashes` are stored: one byte each in input order, 1 when stored
 * (`has`'s answer as it travels). Each window is bound in seek order
 * (seek-order.ts) and answered as ONE row: the held positions joined by
 * group_concat. A row per held hash cost more than the seeks (workerd
 * builds a JS object per row: ~45 ms per 30,000 rows).
 */
export function probeHashList(db: Db, hashes: HashSource): Uint8Array {
  const windows = hashWindows(hashes);
  const have = new Uint8Array(windows.reduce((n, w) => n + w.count, 0));
  for (const w of windows) {
    const { order, sorted } = seekOrder(w.blob, w.count);
    const { rows } = db.exec<{ held: string | null }>(
      `${WANTED_CTE} SELECT group_concat(w.i) AS held FROM wanted w CROSS JOIN objects o ON o.hash = w.hash`,
      sorted,
      w.count,
    );
    forEachPosition(rows[0]?.held ?? null, (j) => {
      have[w.offset + (order[j] as number)] = 1;
    });
  }
  return have;
}

/** Calls `fn` with each number of a group_concat list ("3,17,4"); null is the empty list. */
function forEachPosition(list: string | null, fn: (n: number) => void): void {
  if (list === null) return;
  let n = 0;
  for (let k = 0; k < list.length; k++) {
    const c = list.charCodeAt(k);
    if (c === 44) {
      fn(n);
      n = 0;
    } else n = n * 10 + (c - 48);
  }
  fn(n);
}

/**
 * The stored size of each of `hashes`, in input order, -1 when not stored
 * (push's chunk check: referential integrity and the size rule). The same
 * seeks as probeHashList, answered as two parallel group_concat lists.
 */
export function probeSizes(db: Db, hashes: HashSource): Float64Array {
  const windows = hashWindows(hashes);
  const sizes = new Float64Array(windows.reduce((n, w) => n + w.count, 0)).fill(-1);
  for (const w of windows) {
    const { order, sorted } = seekOrder(w.blob, w.count);
    const { rows } = db.exec<{ held: string | null; sizes: string | null }>(
      `${WANTED_CTE} SELECT group_concat(w.i) AS held, group_concat(o.size) AS sizes
       FROM wanted w CROSS JOIN objects o ON o.hash = w.hash`,
      sorted,
      w.count,
    );
    const held: number[] = [];
    forEachPosition(rows[0]?.held ?? null, (j) => held.push(j));
    let k = 0;
    forEachPosition(rows[0]?.sizes ?? null, (size) => {
      sizes[w.offset + (order[held[k++] as number] as number)] = size;
    });
  }
  return sizes;
}

/** Which of `hashes` are stored, in input order (push's missing-object check). */
export function probeHashes(db: Db, hashes: readonly Uint8Array[]): boolean[] {
  return Array.from(probeHashList(db, hashes), (b) => b === 1);
}
