/** push: one host's change-pack, applied atomically and idempotently. */
import type { CborParts } from "./cbor-parts.ts";
import { CborHeads, weighItem } from "./cbor-weight.ts";
import { type Cursor, compareCursors } from "./cursor.ts";
import {
  assertStorableTarget,
  type Entry,
  type EntryWith,
  MAX_CHUNKS_PER_FILE,
  readEntryWith,
  writeEntry,
} from "./entry.ts";
import { ProtocolError } from "./errors.ts";
import { type HashList, joinHashes } from "./hash.ts";
import { ID_BYTES, REV_ID_BYTES } from "./hello.ts";
import { LIMITS } from "./limits.ts";
import { type ObjectBlob, readObjectBlobs, writeObjects } from "./objects.ts";
import { assertUnreservedPath } from "./paths.ts";
import { optional, readArray, readBool, readCursor, readFixedBytes, readHashList, readMap, readUint } from "./read.ts";

/**
 * One change in a pack. `base` is the server rev of the state the host last
 * agreed with for this path (0: the host knew no state for it). When the
 * server's state is newer and came from another host, the write is a
 * conflict and the pack is refused rather than silently overwriting. Without
 * `base` the write is unconditional.
 *
 * A file's chunks travel as one hash list (protocol version 4, PROTOCOL.md
 * §4.5), as `has` sends its hashes: decoded, a file of 60,000 chunks is one
 * view of the body, not 60,000 objects (issue 28: sixteen such pushes at
 * once grew the server by ~120 MiB of garbage, although each was refused).
 */
export type PushEntry = EntryWith<HashList> & { readonly base?: number };

/** An entry as a push carries it (a file's chunks joined into one hash list), with `base` when given. */
export function pushEntryOf(e: Entry, base?: number): PushEntry {
  const entry = e.kind === "file" ? { ...e, chunks: joinHashes(e.chunks) } : e;
  return base === undefined ? entry : { ...entry, base };
}

/**
 * A push refused `missing_objects` names at most this many of the chunks
 * the server lacks, the first its entries list (PROTOCOL.md §4.5 rule 5):
 * an answer as large as a 60,000-chunk push cost the server as much as
 * decoding it (issue 28). A host learns the rest with `has`.
 */
export const MAX_MISSING_NAMED = 1024;

export interface PushRequest {
  readonly hostId: Uint8Array;
  /** Must equal the server's `acked` for this host. */
  readonly start: Cursor;
  /** The host cursor this pack brings the host to; becomes `acked`. */
  readonly end: Cursor;
  readonly entries: readonly PushEntry[];
  /** Objects carried inline, stored (verified) before the entries are checked. */
  readonly objects: readonly ObjectBlob[];
  /**
   * The server rev through which this host has pulled every change (its pull
   * cursor). A live path under one the pack replaces (a directory deleted, or
   * turned into a file or symlink) that another host wrote after it is a
   * conflict: this host never saw it. Without it the replacing entry's `base`
   * stands in.
   */
  readonly pulled?: number;
  /**
   * The identity the host holds for rev `pulled`: when given and not the
   * server's, the pack is refused with `cursor_mismatch` (the server was
   * restored from an older copy and `pulled` names another history's rev).
   */
  readonly pulledId?: Uint8Array;
}

export interface PushResponse {
  /** The server rev this pack took, or the current rev when it was already applied. */
  readonly rev: number;
  readonly acked: Cursor;
  /** False when the pack had been applied before and was only acknowledged again. */
  readonly applied: boolean;
  /**
   * True when this pack took `rev` (it wrote entries); false when it wrote
   * none: `rev` is then the head, which may hold only other hosts' changes.
   * Absent from servers before it: the host cannot tell the two apart.
   */
  readonly committed?: boolean;
  /** The identity of `rev` (absent at rev 0): a host that moves its pull cursor to `rev` saves it. */
  readonly revId?: Uint8Array;
}

export function decodePushRequest(value: unknown): PushRequest {
  const m = readMap(value, "push");
  const start = readCursor(m.start, "start");
  const end = readCursor(m.end, "end");
  if (compareCursors(end, start) <= 0) {
    throw new ProtocolError("bad_request", "end: must be after start", { field: "end" });
  }
  const seen = new Set<string>();
  const entries = readArray(m.entries, "entries", LIMITS.maxEntries).map((v, i): PushEntry => {
    const f = readMap(v, `entries[${i}]`);
    const entry = readEntryWith(f, `entries[${i}]`, (list, field) => readHashList(list, field, MAX_CHUNKS_PER_FILE));
    assertUnreservedPath(entry.path);
    if (entry.kind === "symlink") assertStorableTarget(entry.target, `entries[${i}].target`);
    if (seen.has(entry.path)) {
      throw new ProtocolError("bad_request", `entries[${i}]: duplicate path in pack`, { path: entry.path });
    }
    seen.add(entry.path);
    const base = optional(f.base, readUint, `entries[${i}].base`);
    return base === undefined ? entry : { ...entry, base };
  });
  const pulled = optional(m.pulled, readUint, "pulled");
  const pulledId = optional(m.pulledId, (v, f) => readFixedBytes(v, f, REV_ID_BYTES), "pulledId");
  return {
    hostId: readFixedBytes(m.hostId, "hostId", ID_BYTES),
    start,
    end,
    entries,
    objects: m.objects === undefined || m.objects === null ? [] : readObjectBlobs(m.objects, "objects"),
    ...(pulled === undefined ? {} : { pulled }),
    ...(pulledId ? { pulledId } : {}),
  };
}

export function decodePushResponse(value: unknown): PushResponse {
  const m = readMap(value, "push");
  const revId = optional(m.revId, (v, f) => readFixedBytes(v, f, REV_ID_BYTES), "revId");
  const committed = optional(m.committed, readBool, "committed");
  return {
    rev: readUint(m.rev, "rev"),
    acked: readCursor(m.acked, "acked"),
    applied: readBool(m.applied, "applied"),
    ...(committed === undefined ? {} : { committed }),
    ...(revId ? { revId } : {}),
  };
}

/**
 * Writes a push request, the one way it is written (protocol/ops.ts), with
 * the keys in the order and the bytes encodeCbor would give a map of them
 * (test/worker/cbor-parts.test.ts): a map per entry built and copied again
 * (encodeCbor's widening of 64-bit integers) cost ~10 µs an entry for
 * 10,000 entries, and a pack is encoded while the object waits for it.
 * Entries carry only their kind's fields (entry.ts ENTRY_KEYS), so a value
 * that holds more (a `Change` with its `rev`) never leaks extra keys. Inline
 * objects' bytes are referenced, as in an upload.
 */
export function writePushRequest(w: CborParts, req: PushRequest): CborParts {
  const optionals = (req.objects.length > 0 ? 1 : 0) + (req.pulled !== undefined ? 1 : 0) + (req.pulledId ? 1 : 0);
  w.map(4 + optionals)
    .text("hostId")
    .bytes(req.hostId);
  writeCursor(w.text("start"), req.start);
  writeCursor(w.text("end"), req.end);
  w.text("entries").array(req.entries.length);
  for (const e of req.entries) writePushEntry(w, e);
  if (req.objects.length > 0) writeObjects(w, req.objects);
  if (req.pulled !== undefined) w.text("pulled").uint(req.pulled);
  if (req.pulledId) w.text("pulledId").bytes(req.pulledId);
  return w;
}

function writeCursor(w: CborParts, c: Cursor): void {
  w.map(2).text("rev").uint(c.rev).text("path");
  if (c.path === null) w.null();
  else w.text(c.path);
}

function writePushEntry(w: CborParts, e: PushEntry): void {
  writeEntry(w, e, e.base === undefined ? 0 : 1);
  if (e.base !== undefined) w.text("base").uint(e.base);
}

/**
 * Whether a push body carries objects inline (an `objects` key whose array
 * is not empty), read from its heads without decoding it: the Worker
 * decodes only such a push itself (worker/r2/push-route.ts), and hands any
 * other to the object, which decodes it once. True for a body that is not a
 * map of text keys: the object's decoder gives its refusal.
 */
export function pushCarriesObjects(body: Uint8Array): boolean {
  const heads = new CborHeads(body);
  const keys = heads.nextOf(5);
  if (keys === null) return true;
  for (let i = 0; i < keys; i++) {
    const length = heads.nextOf(3);
    if (length === null) return true;
    const key = heads.at;
    heads.skip(length);
    if (length === OBJECTS_KEY.length && OBJECTS_KEY.every((b, j) => body[key + j] === b)) {
      const count = heads.next();
      return !(heads.major === 4 && count === 0) && !(heads.major === 7 && heads.info === 22);
    }
    weighItem(heads, Number.POSITIVE_INFINITY);
  }
  return false;
}

const OBJECTS_KEY = [..."objects"].map((c) => c.charCodeAt(0));
