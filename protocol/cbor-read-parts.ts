/**
 * CBOR read from the buffers a body arrived in, without joining them: a
 * byte string comes back as views of those buffers. For answers that are
 * mostly object bytes (objects/get): joining an 8 MiB answer into one
 * buffer before decoding it cost ~10% of a pull's CPU on the host (issue
 * 13), nearly all of it page faults on the fresh buffer. cbor-parts.ts is
 * the writing side.
 *
 * Only definite lengths and the heads a byte string, text, array, map or
 * unsigned integer can have: a reader (objects.ts readGetObjectsAnswer)
 * that meets anything else gives up (`PartsReader.unreadable`), and its
 * caller decodes the joined buffers with the full decoder instead, which
 * also reports what is malformed.
 */

import { concatBytes } from "./cbor-parts.ts";

/** Thrown when the body is not in the shape the reader expects; never escapes a reader. */
export const UNREADABLE = new Error("not readable from parts");

// Keys only: one that is not UTF-8 matches none the reader knows, and it gives up.
const utf8 = new TextDecoder();

export class PartsReader {
  private part = 0;
  private at = 0;

  constructor(private readonly parts: readonly Uint8Array[]) {}

  /** True when every byte has been read. */
  atEnd(): boolean {
    this.skipEmpty();
    return this.part >= this.parts.length;
  }

  /** A map's head: its number of entries. */
  map(): number {
    return this.lengthOf(5);
  }

  array(): number {
    return this.lengthOf(4);
  }

  text(): string {
    const n = this.lengthOf(3);
    return utf8.decode(concatBytes(this.take(n)));
  }

  /** A byte string as views of the buffers it lies in (one or more; none when empty). */
  bytes(): Uint8Array[] {
    return this.take(this.lengthOf(2));
  }

  /** A byte string of exactly `n` bytes, in one buffer (a view when it lies in one part, else a copy). */
  bytesOf(n: number): Uint8Array {
    const views = this.bytes();
    const length = views.reduce((s, v) => s + v.byteLength, 0);
    if (length !== n) throw UNREADABLE;
    return concatBytes(views);
  }

  /** The length a head of major type `major` says (definite, below 2^53). */
  private lengthOf(major: number): number {
    const initial = this.byte();
    if (initial >> 5 !== major) throw UNREADABLE;
    const info = initial & 0x1f;
    if (info < 24) return info;
    const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0;
    if (size === 0) throw UNREADABLE; // indefinite length or reserved
    let n = 0;
    for (let i = 0; i < size; i++) n = n * 256 + this.byte();
    if (!Number.isSafeInteger(n)) throw UNREADABLE;
    return n;
  }

  private byte(): number {
    this.skipEmpty();
    const p = this.parts[this.part];
    if (p === undefined) throw UNREADABLE;
    return p[this.at++] as number;
  }

  private take(n: number): Uint8Array[] {
    const views: Uint8Array[] = [];
    let left = n;
    while (left > 0) {
      this.skipEmpty();
      const p = this.parts[this.part];
      if (p === undefined) throw UNREADABLE;
      const k = Math.min(left, p.byteLength - this.at);
      views.push(p.subarray(this.at, this.at + k));
      this.at += k;
      left -= k;
    }
    return views;
  }

  private skipEmpty(): void {
    while (this.part < this.parts.length && this.at >= (this.parts[this.part] as Uint8Array).byteLength) {
      this.part++;
      this.at = 0;
    }
  }
}
