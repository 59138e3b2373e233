/**
 * Object bytes in packs (schema migration 2): the new objects of one
 * request are concatenated into packs of up to PACK_BYTES, appended to the
 * rowid table `packs`; `objects` indexes them by hash with small rows
 * (pack, offset, size), so has, push's missing check and objects/get's
 * sizing walk a dense B-tree. A tiny object sits inline in its index row.
 * Measured in workerd by bench/sqlite/object-store-timing.test.ts.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { HASH_BYTES, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { bulkWindows } from "./bulk.ts";
import { type Capacity, ensureRoom } from "./capacity.ts";
import { clearDamaged } from "./damaged.ts";
import type { Db } from "./db.ts";
import { hashWindows, probeHashes, WANTED_CTE } from "./hash-list.ts";

/** A pack is closed before it passes this; an object is never split. */
export const PACK_BYTES = 1024 * 1024;
/**
 * An object this large gets a pack of its own: reading it then reads
 * nothing else, and packing it would only close the current pack early.
 */
export const SOLO_BYTES = PACK_BYTES / 4;
/**
 * An object this small is stored in its index row: the row stays well under
 * SQLite's 1/20 of a page for WITHOUT ROWID rows, and a push of tiny files
 * writes no pack row at all.
 */
export const INLINE_BYTES = 64;

/** Packs in R2 asked for with no bucket bound: out of reach, not lost (a read, a download, the check). */
export function noBucket(key: string): ProtocolError {
  return new ProtocolError(
    "unavailable",
    `this workspace's bytes are in R2 packs and no bucket is bound: start the server with its bucket (ferry serve without --no-r2; PACKS in wrangler.toml)`,
    { key },
  );
}

/** An index row to write: a slice of a pack (by its id), or inline bytes (pack null). */
export interface Placed {
  readonly hash: Uint8Array;
  readonly pack: number | null;
  readonly offset: number;
  readonly size: number;
  readonly bytes: Uint8Array | null;
}

/**
 * Stores verified objects not already held, in request order (a host sends
 * a tree's objects in path order and a restore asks in that order, so a
 * restore reads each pack once). Returns how many were new; stored bytes are
 * never overwritten, and a push of held objects writes nothing. Callers
 * (objects upload, push) run it inside their transaction, so the probe and
 * the inserts see one state. `at` is the upload time the collector's grace
 * counts from (worker/sync/gc/sweep.ts), written in the index row: no row more.
 * With `restartGrace` (an upload: objects/put), a held object's upload time
 * becomes `at` too, so the host that uploads it again before naming it has
 * the whole grace to push (PROTOCOL.md §7.9); a push names what it carries,
 * so it writes no such row. With `capacity`, new bytes past the cap throw
 * `workspace_full` before anything is written (capacity.ts).
 */
export function storeObjects(
  db: Db,
  objects: readonly ObjectBlob[],
  at: number,
  { restartGrace = false, capacity }: { restartGrace?: boolean; capacity?: Capacity | undefined } = {},
): number {
  const distinct = new Map<string, ObjectBlob>();
  for (const o of objects) {
    const hex = toHex(o.hash);
    if (!distinct.has(hex)) distinct.set(hex, o);
  }
  const candidates = [...distinct.values()];
  const held = probeHashes(
    db,
    candidates.map((o) => o.hash),
  );
  const fresh = candidates.filter((_, i) => !held[i]);
  ensureRoom(
    capacity,
    fresh.reduce((n, o) => n + o.bytes.byteLength, 0),
  );
  if (restartGrace && fresh.length < candidates.length) {
    touchUploads(
      db,
      candidates.filter((_, i) => held[i]).map((o) => o.hash),
      at,
    );
  }

  const packs: ObjectBlob[][] = [];
  const sizes: number[] = [];
  const rows: (Placed & { readonly bytes: Uint8Array })[] = [];
  let open = -1;
  for (const o of fresh) {
    const size = o.bytes.byteLength;
    let pack: number;
    if (size <= INLINE_BYTES) {
      rows.push({ hash: o.hash, pack: null, offset: 0, size, bytes: o.bytes });
      continue;
    } else if (size >= SOLO_BYTES) {
      pack = packs.push([]) - 1;
      sizes.push(0);
    } else {
      if (open < 0 || (sizes[open] as number) + size > PACK_BYTES) {
        open = packs.push([]) - 1;
        sizes.push(0);
      }
      pack = open;
    }
    rows.push({ hash: o.hash, pack, offset: sizes[pack] as number, size, bytes: o.bytes });
    (packs[pack] as ObjectBlob[]).push(o);
    sizes[pack] = (sizes[pack] as number) + size;
  }

  // The index rows first, naming the packs by the ids they will get, then the packs (appendPack says why).
  const first = packs.length > 0 ? nextPackId(db) : 0;
  writeIndex(
    db,
    rows.map((r) => (r.pack === null ? r : { ...r, pack: first + r.pack })),
    at,
  );
  packs.forEach((members, i) => {
    appendPack(
      db,
      first + i,
      members.map((o) => o.bytes),
      sizes[i] as number,
    );
  });
  return fresh.length;
}

/** Sets the upload time of held objects `hashes` to `at` (storeObjects' restartGrace, the R2 record). */
export function touchUploads(db: Db, hashes: readonly Uint8Array[], at: number): void {
  for (const w of hashWindows(hashes)) {
    db.exec(`${WANTED_CTE} UPDATE objects SET at = ?3 WHERE hash IN (SELECT hash FROM wanted)`, w.blob, w.count, at);
  }
}

/**
 * The id the next pack appended gets: what SQLite would pick for a new rowid
 * (the table has no AUTOINCREMENT). Read once by a caller that appends
 * packs, which then names them itself (appendPack).
 */
export function nextPackId(db: Db): number {
  return (db.exec<{ id: number }>(`SELECT coalesce(max(id), 0) + 1 AS id FROM packs`).rows[0] as { id: number }).id;
}

/**
 * Where a pack of several parts is put together before it is bound: SQLite
 * copies what it binds, so one buffer serves every pack (calls are
 * synchronous). A fresh buffer per pack cost its zero-fill and page faults.
 */
let assembly: Uint8Array | null = null;

/**
 * Appends one pack under `id`: `parts` concatenated, `size` bytes in all (at
 * most PACK_BYTES, or one part). One part is bound where it lies (in the
 * request body, or another pack's row) without a copy.
 *
 * A single-row INSERT with its id given, without RETURNING, opens no
 * statement journal (RETURNING is a trigger, and a trigger makes SQLite
 * journal the statement inside a transaction). With one open, every page an
 * earlier pack of the transaction left dirty and SQLite spilled while this
 * statement ran was copied to the sub-journal first: 7-10% of the object's
 * CPU on a 12 MiB upload (BENCHMARKS.md section 15). So a caller writes its
 * index rows (a statement that needs its journal) before its packs, while
 * few pages are dirty.
 */
export function appendPack(db: Db, id: number, parts: readonly Uint8Array[], size: number): void {
  let bytes = parts[0] ?? new Uint8Array(0);
  if (parts.length > 1) {
    if (assembly === null || assembly.byteLength < size) assembly = new Uint8Array(Math.max(size, PACK_BYTES));
    let at = 0;
    for (const part of parts) {
      assembly.set(part, at);
      at += part.byteLength;
    }
    bytes = assembly.subarray(0, size);
  }
  db.exec(`INSERT INTO packs (id, bytes, size) VALUES (?, ?, ?)`, id, bytes, bytes.byteLength);
}

/**
 * The index rows, thousands per statement (bulk.ts): hash and inline bytes
 * bound as one blob, the rest as JSON. Inserted in hash order, so the key
 * B-tree is walked front to back. A plain INSERT: the caller's probe, in
 * its transaction, said every hash is new, so a conflict is a broken
 * invariant and throws. Shared with the R2 ingest's record (r2-record.ts).
 */
export function writeIndex(db: Db, rows: Placed[], at: number): void {
  rows.sort((a, b) => compareBytes(a.hash, b.hash));
  // An object found damaged and forgotten (damaged.ts) is whole again once stored anew.
  clearDamaged(
    db,
    rows.map((r) => r.hash),
  );
  for (const w of bulkWindows(
    rows,
    (r) => (r.pack === null ? [r.hash, r.bytes ?? new Uint8Array(0)] : [r.hash]),
    (r, at) => [at, r.pack, r.offset, r.size],
  )) {
    db.exec(
      `INSERT INTO objects (hash, pack, offset, size, bytes, at)
       SELECT substr(?1, j.value ->> 0 + 1, ${HASH_BYTES}), j.value ->> 1, j.value ->> 2, j.value ->> 3,
         CASE WHEN j.value ->> 1 IS NULL THEN substr(?1, j.value ->> 0 + ${HASH_BYTES + 1}, j.value ->> 3) END, ?3
       FROM json_each(?2) j`,
      w.blob,
      w.json,
      at,
    );
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  }
  return a.length - b.length;
}

/** Where an object's bytes are: a slice of a pack, or inline (pack null). */
export type Placement = {
  readonly pack: number | null;
  readonly offset: number;
  readonly size: number;
  readonly bytes: Uint8Array | null;
};
