/** SHA-256 helpers. Hashes are 32-byte Uint8Arrays everywhere, never hex. */
export const HASH_BYTES = 32;

/** SHA-256 with the platform's native digest (Web Crypto in workerd and Node). */
export async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

export function hashesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Hex, for logs, stats and error messages only. */
/** The two hex digits of each byte value: toHex runs over whole chunk lists (a 60,000-chunk file's is 1.9 MB). */
const HEX_PAIRS: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

export function toHex(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += HEX_PAIRS[bytes[i] as number];
  return s;
}

/**
 * A hash list as it travels (protocol version 2): n hashes concatenated into
 * one byte string of 32·n bytes. One CBOR item instead of n, so neither side
 * encodes, decodes or allocates per hash; the server binds windows of it to
 * SQL as they are (worker/sync/hash-list.ts).
 */
export type HashList = Uint8Array;

/** Concatenates hashes into one list; senders build it once per request. */
export function joinHashes(hashes: readonly Uint8Array[]): HashList {
  const list = new Uint8Array(hashes.length * HASH_BYTES);
  hashes.forEach((h, i) => {
    // A shorter or longer hash would shift every hash after it: a caller's bug.
    if (h.byteLength !== HASH_BYTES) throw new Error(`hash ${i} has ${h.byteLength} bytes, not ${HASH_BYTES}`);
    list.set(h, i * HASH_BYTES);
  });
  return list;
}

/** How many hashes a (validated) list holds. */
export function hashCount(list: HashList): number {
  return list.byteLength / HASH_BYTES;
}

/** The `i`th hash: a view into the list, not a copy. */
export function hashAt(list: HashList, i: number): Uint8Array {
  return list.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES);
}

/** Four bytes from `at` as an unsigned big-endian integer: a key for a hash without a string. */
export function wordAt(bytes: Uint8Array, at: number): number {
  return (
    (((bytes[at] as number) << 24) |
      ((bytes[at + 1] as number) << 16) |
      ((bytes[at + 2] as number) << 8) |
      (bytes[at + 3] as number)) >>>
    0
  );
}

/** Every hash of a list as views into it (for callers that work per hash). */
export function splitHashes(list: HashList): Uint8Array[] {
  return Array.from({ length: hashCount(list) }, (_, i) => hashAt(list, i));
}
