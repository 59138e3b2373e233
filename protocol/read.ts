/**
 * Field readers for decoders: each takes an `unknown` from the CBOR decoder
 * and returns a typed value or throws `bad_request` naming the field. Only
 * decoders (the edge) use these; nothing past the edge sees `unknown`.
 */
import type { Cursor } from "./cursor.ts";
import { ProtocolError } from "./errors.ts";
import { HASH_BYTES, type HashList } from "./hash.ts";
import { assertValidPath } from "./paths.ts";
import { MIN_PROTOCOL_VERSION, PROTOCOL_VERSION } from "./version.ts";

export type Fields = Readonly<Record<string, unknown>>;

function bad(field: string, what: string): never {
  throw new ProtocolError("bad_request", `${field}: ${what}`, { field });
}

export function readMap(value: unknown, field: string): Fields {
  if (value === null || typeof value !== "object" || Array.isArray(value) || value instanceof Uint8Array) {
    bad(field, "expected a map");
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) bad(field, "expected a map");
  return value as Fields;
}

/** CBOR's 64-bit integers decode as BigInt: narrow those a number holds exactly. */
function narrow(value: unknown): unknown {
  return typeof value === "bigint" &&
    value >= BigInt(Number.MIN_SAFE_INTEGER) &&
    value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value;
}

export function readUint(value: unknown, field: string): number {
  const n = narrow(value);
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    bad(field, "expected an unsigned integer below 2^53");
  }
  return n;
}

export function readInt(value: unknown, field: string): number {
  const n = narrow(value);
  if (typeof n !== "number" || !Number.isSafeInteger(n)) bad(field, "expected an integer below 2^53");
  return n;
}

export function readBool(value: unknown, field: string): boolean {
  if (typeof value !== "boolean") bad(field, "expected a boolean");
  return value;
}

export function readText(value: unknown, field: string): string {
  if (typeof value !== "string") bad(field, "expected a text string");
  return value;
}

export function readBytes(value: unknown, field: string): Uint8Array {
  if (!(value instanceof Uint8Array)) bad(field, "expected a byte string");
  return value;
}

export function readFixedBytes(value: unknown, field: string, length: number): Uint8Array {
  const bytes = readBytes(value, field);
  if (bytes.byteLength !== length) bad(field, `expected ${length} bytes, got ${bytes.byteLength}`);
  return bytes;
}

export function readHash(value: unknown, field: string): Uint8Array {
  return readFixedBytes(value, field, HASH_BYTES);
}

/** An array of at most `max` items; past `max` it is `payload_too_large`. */
export function readArray(value: unknown, field: string, max: number): readonly unknown[] {
  if (!Array.isArray(value)) bad(field, "expected an array");
  if (value.length > max) {
    throw new ProtocolError("payload_too_large", `${field}: ${value.length} items, at most ${max}`, {
      field,
      limit: max,
    });
  }
  return value;
}

/**
 * A hash list (hash.ts): one byte string whose length is a multiple of 32,
 * at most `max` hashes. Returned as the decoder's view of the body, never
 * copied. An array here is an older version's form (one byte string per
 * hash: version 1's `has`, version 3's push chunks), so it is answered `unsupported_version` with the range this side
 * speaks, which tells an older client what to do; any other type is
 * `bad_request`.
 */
export function readHashList(value: unknown, field: string, max: number): HashList {
  if (Array.isArray(value)) {
    throw new ProtocolError(
      "unsupported_version",
      `${field}: an array of hashes is an older protocol's form; this server speaks ${MIN_PROTOCOL_VERSION} to ${PROTOCOL_VERSION}, which send one byte string of concatenated ${HASH_BYTES}-byte hashes`,
      { field, min: MIN_PROTOCOL_VERSION, max: PROTOCOL_VERSION },
    );
  }
  const list = readBytes(value, field);
  if (list.byteLength % HASH_BYTES !== 0) {
    bad(field, `expected concatenated ${HASH_BYTES}-byte hashes, got ${list.byteLength} bytes`);
  }
  const count = list.byteLength / HASH_BYTES;
  if (count > max) {
    throw new ProtocolError("payload_too_large", `${field}: ${count} hashes, at most ${max}`, { field, limit: max });
  }
  return list;
}

export function readPath(value: unknown, field: string): string {
  const path = readText(value, field);
  assertValidPath(path);
  return path;
}

export function readCursor(value: unknown, field: string): Cursor {
  const m = readMap(value, field);
  const rev = readUint(m.rev, `${field}.rev`);
  const path = m.path === null || m.path === undefined ? null : readPath(m.path, `${field}.path`);
  if (rev === 0 && path !== null) bad(field, "rev 0 has no paths");
  return { rev, path };
}

export function optional<T>(value: unknown, read: (v: unknown, f: string) => T, field: string): T | undefined {
  return value === undefined || value === null ? undefined : read(value, field);
}
