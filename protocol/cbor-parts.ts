/**
 * CBOR written as a list of buffers: heads and small values packed together,
 * large byte strings referenced where they lie, not copied. For bodies that
 * are mostly object bytes (an `objects` upload): encoding one whole buffer
 * copied every chunk once more into it (issue 13: 2.2-3.2 s of a push).
 * The parts, concatenated, are one well-formed CBOR item (RFC 8949), as
 * any decoder reads it; the writer emits definite lengths and shortest
 * heads, like encodeCbor.
 */

/** A byte string at least this long becomes a part of its own. */
const REFERENCED_BYTES = 4096;
const utf8 = new TextEncoder();

export class CborParts {
  private readonly parts: Uint8Array[] = [];
  private head = new Uint8Array(4096);
  private at = 0;
  private total = 0;

  /** A map of `size` entries follows: key, value, key, value, ... */
  map(size: number): this {
    return this.typeAndLength(5, size);
  }

  array(size: number): this {
    return this.typeAndLength(4, size);
  }

  uint(value: number): this {
    return this.typeAndLength(0, integer(value));
  }

  /** A signed integer: major type 1 holds -1 - value for a negative one. */
  int(value: number): this {
    return integer(value) < 0 ? this.typeAndLength(1, -1 - value) : this.typeAndLength(0, value);
  }

  null(): this {
    return this.byte(0xf6);
  }

  text(value: string): this {
    const n = value.length;
    // ASCII (every key, most paths) is written char by char: a TextEncoder call per string cost more
    // than the rest of a push entry's writing (push.ts writePushRequest).
    if (n < 128) {
      this.room(n + 2); // the head (at most two bytes for n < 256) and the chars, in one run
      const at = this.at;
      this.typeAndLength(3, n);
      const head = this.head;
      let j = this.at;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        head[j++] = c;
      }
      if (i === n) {
        this.at = j;
        this.total += n;
        return this;
      }
      this.total -= this.at - at; // not ASCII: the head is written again below for the UTF-8 length
      this.at = at;
    }
    const bytes = utf8.encode(value);
    this.typeAndLength(3, bytes.byteLength);
    this.copy(bytes);
    return this;
  }

  /** A byte string; a large one is referenced, so it must not change until the parts are sent. */
  bytes(value: Uint8Array): this {
    return this.typeAndLength(2, value.byteLength).raw(value);
  }

  /**
   * Bytes as they are: an item encoded already (encodeCbor's), or a byte
   * string's content after its head. A large run is referenced, not copied.
   */
  raw(bytes: Uint8Array): this {
    if (bytes.byteLength < REFERENCED_BYTES) this.copy(bytes);
    else {
      this.cut();
      this.parts.push(bytes);
      this.total += bytes.byteLength;
    }
    return this;
  }

  /**
   * The item in one buffer of exactly its length: one allocation and one
   * copy, where encodeCbor grows a buffer up to four times the item's size
   * (cbor-x's growth policy), zero-filled in the Workers runtime.
   */
  toBytes(): Uint8Array {
    return concatBytes(this.finish().parts);
  }

  /** The item's buffers, in order, and their total length. */
  finish(): { readonly parts: Uint8Array[]; readonly byteLength: number } {
    this.cut();
    return { parts: this.parts, byteLength: this.total };
  }

  private typeAndLength(major: number, n: number): this {
    const m = major << 5;
    if (n < 24) this.byte(m | n);
    else if (n < 0x100) this.byte(m | 24).byte(n);
    else if (n < 0x1_0000)
      this.byte(m | 25)
        .byte(n >>> 8)
        .byte(n & 0xff);
    else if (n < 0x1_0000_0000) {
      this.byte(m | 26)
        .byte(n >>> 24)
        .byte((n >>> 16) & 0xff)
        .byte((n >>> 8) & 0xff)
        .byte(n & 0xff);
    } else if (Number.isSafeInteger(n)) {
      const high = Math.floor(n / 0x1_0000_0000);
      this.byte(m | 27);
      for (const word of [high, n >>> 0])
        this.byte(word >>> 24)
          .byte((word >>> 16) & 0xff)
          .byte((word >>> 8) & 0xff)
          .byte(word & 0xff);
    } else throw new RangeError(`${n} is not a safe integer`);
    return this;
  }

  private byte(b: number): this {
    this.room(1);
    this.head[this.at++] = b;
    this.total++;
    return this;
  }

  private copy(bytes: Uint8Array): void {
    this.room(bytes.byteLength);
    this.head.set(bytes, this.at);
    this.at += bytes.byteLength;
    this.total += bytes.byteLength;
  }

  private room(n: number): void {
    if (this.at + n <= this.head.byteLength) return;
    this.cut();
    this.head = new Uint8Array(Math.max(4096, n));
  }

  /** Ends the current run of packed bytes as a part. */
  private cut(): void {
    if (this.at === 0) return;
    this.parts.push(this.head.subarray(0, this.at));
    this.head = this.head.subarray(this.at);
    this.at = 0;
  }
}

/**
 * Only safe integers are written as such; anything else (a fraction, NaN)
 * is a caller's bug, not a value to write as a float or truncate.
 */
function integer(value: number): number {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${value} is not a safe integer`);
  return value;
}

/** The buffers one after another in one new buffer (the only buffer itself when there is one). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
