/**
 * A pack object in R2 (PROTOCOL.md §7.9): a header, then the chunks' bytes
 * in header order, so the index can be rebuilt from R2 alone.
 *
 *   magic "FRPK" · version u32 · count u32 · count × (hash[32] · length u32) · bytes
 *
 * Integers are big-endian. Pure: written by the ingest (ingest.ts), read
 * back by the deep check and by anyone rebuilding an index from a bucket.
 */
import { HASH_BYTES } from "../../protocol/hash.ts";

export const PACK_MAGIC = new Uint8Array([0x46, 0x52, 0x50, 0x4b]); // "FRPK"
export const PACK_FORMAT_VERSION = 1;
const FIXED_BYTES = 12;
const MEMBER_BYTES = HASH_BYTES + 4;

/** One chunk of a pack: its hash, and where its bytes are in the whole pack object. */
export interface PackMember {
  readonly hash: Uint8Array;
  readonly offset: number;
  readonly size: number;
}

/** The header's length for `count` chunks: where the first chunk's bytes start. */
export function packHeaderBytes(count: number): number {
  return FIXED_BYTES + count * MEMBER_BYTES;
}

/** A whole pack of `chunks` (in this order), and each chunk's place in it. */
export function writePack(chunks: readonly { readonly hash: Uint8Array; readonly bytes: Uint8Array }[]): {
  bytes: Uint8Array;
  members: PackMember[];
} {
  const header = packHeaderBytes(chunks.length);
  const total = chunks.reduce((n, c) => n + c.bytes.byteLength, header);
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  bytes.set(PACK_MAGIC, 0);
  view.setUint32(4, PACK_FORMAT_VERSION);
  view.setUint32(8, chunks.length);
  const members: PackMember[] = [];
  let at = header;
  chunks.forEach((c, i) => {
    const entry = FIXED_BYTES + i * MEMBER_BYTES;
    bytes.set(c.hash, entry);
    view.setUint32(entry + HASH_BYTES, c.bytes.byteLength);
    bytes.set(c.bytes, at);
    members.push({ hash: c.hash, offset: at, size: c.bytes.byteLength });
    at += c.bytes.byteLength;
  });
  return { bytes, members };
}

/** The chunk count a pack's first 12 bytes declare, or null when they are no pack header of this version. */
export function readPackCount(prefix: Uint8Array): number | null {
  if (prefix.byteLength < FIXED_BYTES) return null;
  for (let i = 0; i < PACK_MAGIC.length; i++) if (prefix[i] !== PACK_MAGIC[i]) return null;
  const view = new DataView(prefix.buffer, prefix.byteOffset, FIXED_BYTES);
  if (view.getUint32(4) !== PACK_FORMAT_VERSION) return null;
  return view.getUint32(8);
}

/**
 * The members a pack's header lists (`header` holds at least the whole
 * header), with their offsets in the pack; null when it is no pack of this
 * version or its lengths run past `packBytes`, the whole object's length.
 */
export function readPackHeader(header: Uint8Array, packBytes: number): PackMember[] | null {
  const count = readPackCount(header);
  if (count === null || header.byteLength < packHeaderBytes(count)) return null;
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const members: PackMember[] = [];
  let at = packHeaderBytes(count);
  for (let i = 0; i < count; i++) {
    const entry = FIXED_BYTES + i * MEMBER_BYTES;
    const size = view.getUint32(entry + HASH_BYTES);
    members.push({ hash: header.slice(entry, entry + HASH_BYTES), offset: at, size });
    at += size;
  }
  return at === packBytes ? members : null;
}
