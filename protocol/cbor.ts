/**
 * The one CBOR codec, with fixed options: plain RFC 8949 maps with string
 * keys, byte strings for bytes, no records, no tags, no typed-array tags, so
 * any CBOR library can read what we write. The no-eval build is used because
 * the Workers runtime forbids `new Function`.
 */
import { Decoder, Encoder } from "cbor-x/index-no-eval";
import { ProtocolError } from "./errors.ts";

const encoder = new Encoder({
  useRecords: false,
  mapsAsObjects: true,
  tagUint8Array: false,
  variableMapSize: true,
  encodeUndefinedAsNil: false,
  useFloat32: 0,
  pack: false,
  structuredClone: false,
  bundleStrings: false,
});

const decoder = new Decoder({
  useRecords: false,
  mapsAsObjects: true,
  // 64-bit integers arrive as BigInt; the readers in read.ts narrow those in
  // the safe range and refuse the rest. (cbor-x's int64AsNumber decodes
  // every 64-bit negative integer as -1, so it is not used.)
});

const UINT32_MAX = 0xffff_ffff;

/**
 * cbor-x writes integers beyond 32 bits as float64; CBOR has real 64-bit
 * integers and other decoders expect them for counters and mtimes. Rewrite
 * such numbers as BigInt, which cbor-x writes as major type 0/1.
 */
function widenIntegers(value: unknown): unknown {
  if (typeof value === "number") {
    return Number.isInteger(value) && (value > UINT32_MAX || value < -UINT32_MAX) ? BigInt(value) : value;
  }
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map(widenIntegers);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = widenIntegers(v);
  return out;
}

/** Encodes a plain value (maps with string keys, arrays, byte strings, numbers, text, booleans, null). */
export function encodeCbor(value: unknown): Uint8Array {
  const bytes = encoder.encode(widenIntegers(value));
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes one CBOR item; anything malformed or trailing is `bad_request`. */
export function decodeCbor(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) throw new ProtocolError("bad_request", "body is empty");
  try {
    return decoder.decode(bytes);
  } catch (e) {
    throw new ProtocolError("bad_request", `malformed CBOR: ${(e as Error).message}`);
  }
}

export const CBOR_CONTENT_TYPE = "application/cbor";
