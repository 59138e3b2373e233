/**
 * What decoding a body will hold, known before it is decoded: one pass over
 * the CBOR heads, allocating nothing per item, that counts the data items
 * and weighs each by what the decoder (cbor-x, on V8) makes of it. The
 * workspace object refuses a body of more than `maxBodyItems` items and
 * charges the weight to its in-flight budget (worker/do/inflight.ts;
 * PROTOCOL.md §2.2), because a body's bytes say little about its decoded
 * size: a 32-byte hash decodes to a Uint8Array of ~100 bytes more (issue 10:
 * three 14 MB pushes of 60,000-chunk files grew workerd by 150 MiB inside a
 * 48 MiB bound on their bodies), and one byte, an empty map, to an object of ~50.
 */
import { ProtocolError } from "./errors.ts";

export interface BodyWeight {
  /** Data items in the body: every map, array, key, value and element counts one. */
  readonly items: number;
  /** An upper bound on the bytes the decoded value holds beyond the body itself. */
  readonly bytes: number;
}

/**
 * Heap bytes per decoded item, upper bounds measured on Node's V8 (no pointer
 * compression, so above workerd's): test/core/cbor-weight.test.ts decodes
 * bodies of each kind and checks the heap grows by no more than their weight.
 */
const WEIGHT = {
  /** Every item: its slot in the array or object that holds it. */
  slot: 16,
  /** A heap number or BigInt (an integer past 2^31, a float); small integers cost nothing more. */
  number: 24,
  /** A Uint8Array view into the body. */
  bytes: 160,
  /** A string's header; its characters take at most one byte per byte of UTF-8 more. */
  text: 40,
  array: 40,
  /** An object, and each property of it (keyed objects fall to dictionary mode). */
  map: 80,
  property: 64,
} as const;

/** Deeper than any message (a socket frame's push entry is four levels down). */
const MAX_DEPTH = 32;

function malformed(what: string): never {
  throw new ProtocolError("bad_request", `malformed CBOR: ${what}`);
}

/** Reads CBOR heads one after another: `next()` reads one and leaves its major type and argument. */
export class CborHeads {
  at = 0;
  major = 0;
  /** A head's additional information (0-31): for major type 7, which simple value or float width. */
  info = 0;

  constructor(readonly body: Uint8Array) {}

  /** The next head's argument (a count, a length or an integer's value); `at` moves past the head. */
  next(): number {
    const { body } = this;
    if (this.at >= body.byteLength) malformed("the body ends inside an item");
    const initial = body[this.at++] as number;
    this.major = initial >> 5;
    this.info = initial & 0x1f;
    if (this.info < 24) return this.info;
    if (this.info < 28) {
      const size = 1 << (this.info - 24);
      if (this.at + size > body.byteLength) malformed("the body ends inside a head");
      let arg = 0;
      for (let i = 0; i < size; i++) arg = arg * 256 + (body[this.at++] as number);
      return arg;
    }
    if (this.info === 31) {
      throw new ProtocolError("bad_request", "body: indefinite-length items are not used (PROTOCOL.md §2.2)");
    }
    return malformed(`reserved additional information ${this.info}`);
  }

  /** The next head's argument when its major type is `major`, else null (for readers that peek at a frame). */
  nextOf(major: number): number | null {
    const arg = this.next();
    return this.major === major ? arg : null;
  }

  /** Moves past a string's `length` bytes, which the head just read announced. */
  skip(length: number): void {
    if (length > this.body.byteLength - this.at) malformed("a string runs past the end of the body");
    this.at += length;
  }
}

/**
 * The weight of the whole body, one CBOR item, or a refusal: `bad_request`
 * for malformed CBOR, a tag or an indefinite-length item (§2.2: none are
 * used; the decoder would run a tag's extension, and an indefinite item's
 * size is not known until its end), or nesting past 32 levels;
 * `payload_too_large` (details `{field: "body", limit}`) past `maxItems`
 * items, found before the rest is read.
 */
export function weighCbor(body: Uint8Array, maxItems: number): BodyWeight {
  if (body.byteLength === 0) throw new ProtocolError("bad_request", "body is empty");
  const heads = new CborHeads(body);
  const weight = weighItem(heads, maxItems);
  if (heads.at !== body.byteLength) malformed(`${body.byteLength - heads.at} bytes after the item`);
  return weight;
}

/** Weighs the item at `heads.at` (nested items included) and moves past it. */
export function weighItem(heads: CborHeads, maxItems: number): BodyWeight {
  let items = 0;
  let bytes = 0;
  /** Items left in each enclosing container; `left` is the innermost's. */
  const open: number[] = [];
  let left = 1;
  for (;;) {
    if (left === 0) {
      const outer = open.pop();
      if (outer === undefined) return { items, bytes };
      left = outer;
      continue;
    }
    left--;
    if (++items > maxItems) {
      throw new ProtocolError("payload_too_large", `body: more than ${maxItems} CBOR data items`, {
        field: "body",
        limit: maxItems,
      });
    }
    const arg = heads.next();
    bytes += WEIGHT.slot;
    switch (heads.major) {
      case 0:
      case 1:
        if (arg > 0x7fff_ffff) bytes += WEIGHT.number;
        break;
      case 2:
        heads.skip(arg);
        bytes += WEIGHT.bytes;
        break;
      case 3:
        heads.skip(arg);
        bytes += WEIGHT.text + arg;
        break;
      case 4:
      case 5: {
        // Each element takes at least one byte: a longer count is malformed, not a reason to wait.
        const count = heads.major === 5 ? 2 * arg : arg;
        if (count > heads.body.byteLength - heads.at) malformed("a container holds more items than the body has bytes");
        bytes += heads.major === 4 ? WEIGHT.array : WEIGHT.map + arg * WEIGHT.property;
        if (open.length >= MAX_DEPTH) throw new ProtocolError("bad_request", `body: nested deeper than ${MAX_DEPTH}`);
        open.push(left);
        left = count;
        break;
      }
      case 6:
        throw new ProtocolError("bad_request", "body: CBOR tags are not used (PROTOCOL.md §2.2)");
      default:
        // Simple values and floats; a float's number is boxed.
        if (heads.info >= 25) bytes += WEIGHT.number;
    }
  }
}
