/**
 * An objects/get answer read from the buffers an HTTP answer arrived in
 * (protocol/cbor-read-parts.ts, objects.ts readGetObjectsAnswer): the same
 * answer the full decoder reads, wherever the buffers are cut, with the
 * object bytes left as views of them; and null (the caller decodes the
 * joined body instead) for anything else.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { concatBytes } from "../../protocol/cbor-parts.ts";
import {
  decodeGetObjectsResponse,
  encodeGetObjectsResponse,
  type GetObjectsResponse,
  type ObjectBlob,
  PartedBlob,
  readGetObjectsAnswer,
} from "../../protocol/objects.ts";

function objectsOf(sizes: readonly number[]): ObjectBlob[] {
  return sizes.map((n, i) => {
    const bytes = new Uint8Array(n).map((_, k) => (k * 31 + i) & 0xff);
    return { hash: new Uint8Array(createHash("sha256").update(bytes).digest()), bytes };
  });
}

const objects = objectsOf([0, 1, 30, 300, 5000, 70_000, 300_000]);
const answer: GetObjectsResponse = { objects, missing: [new Uint8Array(32).fill(7), new Uint8Array(32).fill(9)] };

/** `body` cut at each of `cuts` (offsets, ascending). */
function cut(body: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const at of [...cuts, body.byteLength]) {
    parts.push(body.subarray(from, at));
    from = at;
  }
  return parts;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
/** An object as short text: its hash, and its bytes' own digest (comparing large arrays element by element is slow). */
const digestOf = (o: ObjectBlob) => `${hex(o.hash)}:${createHash("sha256").update(o.bytes).digest("hex")}`;

const decoded = new Map<Uint8Array, GetObjectsResponse>();

function expectSameAnswer(read: GetObjectsResponse | null, body: Uint8Array): void {
  const full = decoded.get(body) ?? decodeGetObjectsResponse(decodeCbor(body));
  decoded.set(body, full);
  expect(read).not.toBeNull();
  expect(read?.missing.map(hex)).toEqual(full.missing.map(hex));
  expect(read?.objects.map(digestOf)).toEqual(full.objects.map(digestOf));
  for (const o of read?.objects ?? []) {
    expect(o).toBeInstanceOf(PartedBlob);
    const parted = o as PartedBlob;
    expect(parted.byteLength).toBe(o.bytes.byteLength);
    expect(Buffer.compare(concatBytes(parted.parts), o.bytes)).toBe(0);
  }
}

describe("an objects/get answer read from its parts", () => {
  it("reads what the full decoder reads, in one part or cut anywhere", () => {
    const body = encodeCbor(answer);
    expect(hex(encodeGetObjectsResponse(answer)) === hex(body)).toBe(true);
    expectSameAnswer(readGetObjectsAnswer([body]), body);
    // Every cut through the first objects' heads, hashes and keys, one at a time and all at once.
    for (let at = 1; at < 200; at++) expectSameAnswer(readGetObjectsAnswer(cut(body, [at])), body);
    expectSameAnswer(readGetObjectsAnswer(cut(body, [...Array(200).keys()].slice(1))), body);
    // Socket-sized parts, and parts of odd sizes, with empty ones in between.
    const every = (n: number) => [...Array(Math.floor((body.byteLength - 1) / n)).keys()].map((k) => (k + 1) * n);
    expectSameAnswer(readGetObjectsAnswer(cut(body, every(65_536))), body);
    expectSameAnswer(readGetObjectsAnswer(cut(body, every(4_099))), body);
    expectSameAnswer(readGetObjectsAnswer([new Uint8Array(0), ...cut(body, every(1_000)), new Uint8Array(0)]), body);
  });

  it("leaves the object bytes where they arrived", () => {
    const body = encodeCbor(answer);
    const parts = cut(body, [100_000, 200_000]).map((p) => p.slice());
    const read = readGetObjectsAnswer(parts);
    const large = read?.objects.at(-1) as PartedBlob;
    expect(large.byteLength).toBe(300_000);
    expect(large.parts.length).toBe(3);
    // The same buffers, not copies of them.
    for (const [i, p] of large.parts.entries()) expect(p.buffer).toBe(parts[i]?.buffer);
  });

  it("answers null for anything but such an answer, so the caller decodes it whole", () => {
    const body = encodeCbor(answer);
    const unreadable = [
      encodeCbor({ error: { code: "internal", message: "internal error" } }),
      encodeCbor({ objects: [] }),
      encodeCbor({ objects: [], missing: [], more: 1 }),
      encodeCbor({ objects: [{ hash: new Uint8Array(31), bytes: new Uint8Array(1) }], missing: [] }),
      encodeCbor({ objects: [{ hash: new Uint8Array(32) }], missing: [] }),
      encodeCbor({ objects: [], missing: [new Uint8Array(33)] }),
      encodeCbor([answer.objects, answer.missing]),
      body.subarray(0, body.byteLength - 1),
      concatBytes([body, new Uint8Array([0])]),
      // An indefinite-length array of objects.
      concatBytes([new Uint8Array([0xa2, 0x67]), new TextEncoder().encode("objects"), new Uint8Array([0x9f, 0xff])]),
    ];
    for (const b of unreadable) {
      expect(readGetObjectsAnswer(cut(b, [Math.floor(b.byteLength / 2)]))).toBeNull();
    }
    expect(readGetObjectsAnswer([])).toBeNull();
  });
});
