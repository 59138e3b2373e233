/**
 * Protocol versions, append-only. A client sends the version it speaks; the
 * server answers with the version it will use, or `unsupported_version` with
 * the range it accepts.
 *
 * 1: hello, has, objects, objects/get, push, changes over HTTP and WebSocket.
 * 2: hash lists travel as one byte string of concatenated 32-byte hashes
 *    (`has` and `objects/get` requests) and `has` answers with one byte per
 *    hash: a probe of 100,000 is one CBOR item each way, not 100,000.
 * 3: push carries `pulled` (the server rev through which the host has
 *    pulled), and the subtree a push replaces is checked for live paths the
 *    host never saw; conflict details name `under`. History for people:
 *    `log` and `snapshot` (read-only) and the `history_expired` error; hello
 *    answers `resync` to a pull cursor older than dropped tombstones. Read
 *    routes for people and the workspace page (`GET tree`, `revs`, `file`,
 *    `versions`, `activity`, `read-token`), and a socket's token as the
 *    subprotocol `bearer.<token>` for browsers.
 * 4: a pushed file's `chunks` is one hash list (the hashes concatenated,
 *    as in `has`), not an array of byte strings: decoding a file of 60,000
 *    chunks is one view of the body, not 60,000 objects (issue 28).
 *
 * The minimum is 4: a version-1 host would send arrays the server no longer
 * reads, a version-2 host would delete work it never saw under a
 * directory it replaces, and a version-3 host's push chunk lists are arrays,
 * so all are refused at hello (and an array of hashes is refused with
 * `unsupported_version` too) rather than half served. See PROTOCOL.md §11.
 */
export const PROTOCOL_VERSION = 4;
export const MIN_PROTOCOL_VERSION = 4;

/** Optional features; a side uses one only when both list it. */
export const CAPABILITIES = ["inline-objects", "websocket", "pokes"] as const;

/**
 * A capability the server lists only while new object bytes go to R2
 * packs (PROTOCOL.md §4.1, §7.9): a host that lists it too sends uploads,
 * and pushes that carry objects, over HTTP even with a socket open, so
 * that the stateless Worker takes their bytes and the object never does.
 */
export const HTTP_UPLOADS = "http-uploads";

/**
 * A push whose inline objects total at most this many bytes is the
 * exception to HTTP_UPLOADS: a host sends it in a socket frame all the
 * same, and the server keeps its objects in the object's SQLite, in the
 * push's own transaction, until a collection moves them to R2 (PROTOCOL.md
 * §7.9). A write to R2 costs more than a small edit's whole trip from one
 * host to another (BENCHMARKS.md bar 7); a few KiB in the object cost it
 * nothing that matters. Half of the 64 KiB a socket frame may have without
 * ever being refused for the server's load (PROTOCOL.md §8.2): room for
 * the entries.
 */
export const SMALL_PUSH_BYTES = 32 * 1024;

/** The bytes of a push's inline objects, as SMALL_PUSH_BYTES counts them. */
export function inlineObjectBytes(objects: readonly { readonly bytes: Uint8Array }[]): number {
  let bytes = 0;
  for (const o of objects) bytes += o.bytes.byteLength;
  return bytes;
}
