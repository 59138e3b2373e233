/** objects (upload) and objects/get (download): chunk bytes addressed by SHA-256. */
import { CborParts, concatBytes } from "./cbor-parts.ts";
import { PartsReader, UNREADABLE } from "./cbor-read-parts.ts";
import { ProtocolError } from "./errors.ts";
import { HASH_BYTES, joinHashes, splitHashes } from "./hash.ts";
import { LIMITS } from "./limits.ts";
import { optional, readArray, readBytes, readHash, readHashList, readMap, readUint } from "./read.ts";

export interface ObjectBlob {
  readonly hash: Uint8Array;
  readonly bytes: Uint8Array;
}

/**
 * An object whose bytes are still the buffers they arrived in (an HTTP
 * objects/get answer, readGetObjectsAnswer): `parts` for a reader that can
 * take them as they are (hash them, write them with one writev); `bytes`
 * joins them on first use. To anyone who reads it as an ObjectBlob it is
 * one: its own properties are `hash` and `bytes` (a getter), so it
 * compares and spreads like a decoded object.
 */
export class PartedBlob implements ObjectBlob {
  declare readonly bytes: Uint8Array;
  readonly #parts: readonly Uint8Array[];
  readonly #byteLength: number;
  #joined: Uint8Array | null = null;

  constructor(
    readonly hash: Uint8Array,
    parts: readonly Uint8Array[],
  ) {
    this.#parts = parts;
    this.#byteLength = parts.reduce((n, p) => n + p.byteLength, 0);
    Object.defineProperty(this, "bytes", {
      enumerable: true,
      get: () => {
        this.#joined ??= concatBytes(this.#parts);
        return this.#joined;
      },
    });
  }

  get parts(): readonly Uint8Array[] {
    return this.#parts;
  }

  get byteLength(): number {
    return this.#byteLength;
  }
}

export interface PutObjectsRequest {
  readonly objects: readonly ObjectBlob[];
}

export interface PutObjectsResponse {
  /** Objects newly stored by this request. */
  readonly stored: number;
  /** Objects the server already held (their bytes were not rewritten). */
  readonly present: number;
}

export interface GetObjectsRequest {
  /**
   * On the wire one byte string of concatenated hashes (`getObjectsFields`);
   * here one view per hash, because the server answers and bounds per hash.
   */
  readonly hashes: readonly Uint8Array[];
  /** Upper bound on object bytes in the answer; the server caps it at `maxGetBytes`. */
  readonly maxBytes?: number;
}

export interface GetObjectsResponse {
  /**
   * Objects in request order, stopping before the byte bound (at least one
   * when any is held). A hash neither here nor in `missing` was not reached:
   * ask again.
   */
  readonly objects: readonly ObjectBlob[];
  readonly missing: readonly Uint8Array[];
}

export function readObjectBlobs(value: unknown, field: string): ObjectBlob[] {
  return readArray(value, field, LIMITS.maxObjects).map((o, i) => {
    const m = readMap(o, `${field}[${i}]`);
    const bytes = readBytes(m.bytes, `${field}[${i}].bytes`);
    if (bytes.byteLength > LIMITS.maxObjectBytes) {
      throw new ProtocolError("payload_too_large", `${field}[${i}]: object of ${bytes.byteLength} bytes`, {
        field: `${field}[${i}].bytes`,
        limit: LIMITS.maxObjectBytes,
      });
    }
    return { hash: readHash(m.hash, `${field}[${i}].hash`), bytes };
  });
}

/** `objects: [* object]`, the bytes of each referenced (cbor-parts.ts). */
export function writeObjects(w: CborParts, objects: readonly ObjectBlob[]): CborParts {
  w.text("objects").array(objects.length);
  for (const o of objects) w.map(2).text("hash").bytes(o.hash).text("bytes").bytes(o.bytes);
  return w;
}

/**
 * Writes a put-objects request with the objects' own bytes referenced, not
 * copied (cbor-parts.ts): as a list of buffers for a transport that sends
 * one (HTTP), or inside a socket frame written to its exact size. Decodes
 * to the same request as encodeCbor's single buffer.
 */
export function writePutObjectsRequest(w: CborParts, req: PutObjectsRequest): CborParts {
  return writeObjects(w.map(1), req.objects);
}

export function decodePutObjectsRequest(value: unknown): PutObjectsRequest {
  return { objects: readObjectBlobs(readMap(value, "objects").objects, "objects") };
}

export function decodePutObjectsResponse(value: unknown): PutObjectsResponse {
  const m = readMap(value, "objects");
  return { stored: readUint(m.stored, "stored"), present: readUint(m.present, "present") };
}

export function decodeGetObjectsRequest(value: unknown): GetObjectsRequest {
  const m = readMap(value, "objects/get");
  // Views into the body, no copies: the server's windows bind them back as the body's own bytes.
  const hashes = splitHashes(readHashList(m.hashes, "hashes", LIMITS.maxHas));
  const maxBytes = optional(m.maxBytes, readUint, "maxBytes");
  return maxBytes === undefined ? { hashes } : { hashes, maxBytes };
}

/** The wire map of an objects/get request: its hashes joined into one byte string, once. */
export function getObjectsFields(req: GetObjectsRequest): Record<string, unknown> {
  const hashes = joinHashes(req.hashes);
  return req.maxBytes === undefined ? { hashes } : { hashes, maxBytes: req.maxBytes };
}

/**
 * An objects/get answer in one buffer of its exact size (cbor-parts.ts): the
 * object answers most of the bytes it ever sends with this.
 */
export function encodeGetObjectsResponse(res: GetObjectsResponse): Uint8Array {
  return writeGetObjectsResponse(new CborParts(), res).toBytes();
}

/** Writes an objects/get answer after what `w` holds, its object bytes referenced where they lie. */
export function writeGetObjectsResponse(w: CborParts, res: GetObjectsResponse): CborParts {
  writeObjects(w.map(2), res.objects).text("missing").array(res.missing.length);
  for (const h of res.missing) w.bytes(h);
  return w;
}

export function decodeGetObjectsResponse(value: unknown): GetObjectsResponse {
  const m = readMap(value, "objects/get");
  return {
    objects: readArray(m.objects, "objects", Number.MAX_SAFE_INTEGER).map((o, i) => {
      const b = readMap(o, `objects[${i}]`);
      return { hash: readHash(b.hash, `objects[${i}].hash`), bytes: readBytes(b.bytes, `objects[${i}].bytes`) };
    }),
    missing: readArray(m.missing, "missing", Number.MAX_SAFE_INTEGER).map((h, i) => readHash(h, `missing[${i}]`)),
  };
}

/**
 * An objects/get answer read from the buffers it arrived in
 * (cbor-read-parts.ts): each object's bytes stay views of them (PartedBlob),
 * never joined into one body. Null when the body is not such an answer (an
 * `{error}`, or a shape this reader does not read): the caller decodes the
 * joined body with decodeCbor and decodeGetObjectsResponse instead, which
 * name what is wrong.
 */
export function readGetObjectsAnswer(parts: readonly Uint8Array[]): GetObjectsResponse | null {
  const r = new PartsReader(parts);
  try {
    let objects: PartedBlob[] | null = null;
    let missing: Uint8Array[] | null = null;
    for (let n = r.map(); n > 0; n--) {
      const key = r.text();
      if (key === "objects" && objects === null) objects = readPartedBlobs(r);
      else if (key === "missing" && missing === null) {
        missing = [];
        for (let k = r.array(); k > 0; k--) missing.push(r.bytesOf(HASH_BYTES));
      } else return null;
    }
    return objects !== null && missing !== null && r.atEnd() ? { objects, missing } : null;
  } catch (e) {
    if (e === UNREADABLE) return null;
    throw e;
  }
}

function readPartedBlobs(r: PartsReader): PartedBlob[] {
  const blobs: PartedBlob[] = [];
  for (let n = r.array(); n > 0; n--) {
    let hash: Uint8Array | null = null;
    let bytes: Uint8Array[] | null = null;
    for (let k = r.map(); k > 0; k--) {
      const key = r.text();
      if (key === "hash" && hash === null) hash = r.bytesOf(HASH_BYTES);
      else if (key === "bytes" && bytes === null) bytes = r.bytes();
      else throw UNREADABLE;
    }
    if (hash === null || bytes === null) throw UNREADABLE;
    blobs.push(new PartedBlob(hash, bytes));
  }
  return blobs;
}
