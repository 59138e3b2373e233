/**
 * Limits the server advertises in hello and enforces on every request. A
 * request past one is refused with `payload_too_large` naming the limit.
 * They are sized for a Durable Object: 128 MB of memory, SQLite with 100 bound
 * parameters, 100 KB statements and 2 MB rows.
 */
export interface Limits {
  /** Largest request body, in bytes (HTTP body or WebSocket frame). */
  readonly maxBodyBytes: number;
  /** Largest object (one chunk). */
  readonly maxObjectBytes: number;
  /** Most hashes in one `has` or `objects/get` request. */
  readonly maxHas: number;
  /** Most objects in one `objects` upload (or inline in one push). */
  readonly maxObjects: number;
  /** Most entries in one push. */
  readonly maxEntries: number;
  /** Most entries in one page of changes. */
  readonly maxPageEntries: number;
  /**
   * Most object bytes in one `objects/get` answer. 4 MiB, as a socket's
   * answers were already held to: the runtime holds about three copies of an
   * answer while it is made and sent, and a client that asks for it and
   * never reads holds it for as long as its connection lasts. At 8 MiB,
   * clients asking four times a second and never reading grew `ferry serve`
   * by 92 MiB; at 4, by 49 (bench:hostile-memory, unread alone), and a pull
   * of the heavy tree, three answers in flight, took no longer.
   */
  readonly maxGetBytes: number;
  /** WebSocket: most requests in flight on one socket before the client waits. */
  readonly maxInflight: number;
  /**
   * Most chunks one file entry may list: its chunk list is stored in its
   * row, and a row holds at most 2 MB. A host holds back (and reports) a
   * larger file rather than have every pack holding it refused.
   */
  readonly maxFileChunks: number;
  /**
   * Most CBOR data items in one request body (every map, array, key, value
   * and element counts one): what a body decodes to grows with its items,
   * not its bytes (protocol/cbor-weight.ts). A host fills a push pack to it.
   */
  readonly maxBodyItems: number;
}

export const MiB = 1024 * 1024;

export const LIMITS: Limits = {
  maxBodyBytes: 8 * MiB,
  maxObjectBytes: MiB,
  maxHas: 100_000,
  maxObjects: 4096,
  maxEntries: 10_000,
  maxPageEntries: 5000,
  maxGetBytes: 4 * MiB,
  maxInflight: 8,
  maxFileChunks: 60_000,
  maxBodyItems: 200_000,
};

/** What a version-3 server that does not advertise `maxFileChunks` enforces (the bound before it was advertised). */
export const UNADVERTISED_MAX_FILE_CHUNKS = 60_000;
/**
 * What a host keeps a push to when the server does not advertise
 * `maxBodyItems` (a version-3 server from before it): such a server decodes
 * any body, and this costs a host nothing but smaller packs of very long
 * chunk lists.
 */
export const UNADVERTISED_MAX_BODY_ITEMS = 200_000;

/** Path limits (bytes of UTF-8). */
export const MAX_PATH_BYTES = 4096;
export const MAX_SEGMENT_BYTES = 255;
/** Linux's PATH_MAX (4096) counts the NUL: a target of 4096 bytes cannot be created there. */
export const MAX_SYMLINK_TARGET_BYTES = 4095;
