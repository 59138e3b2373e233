/**
 * protocol/cbor-weight.ts: a body's CBOR items counted and weighed before it
 * is decoded, and that weight an upper bound on what decoding it really
 * holds, measured on V8's heap for every kind of item a client can pile up.
 */
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { weighCbor } from "../../protocol/cbor-weight.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { isAckFrame, peekFrameId } from "../../protocol/ws.ts";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

function refusal(body: Uint8Array, maxItems = LIMITS.maxBodyItems): ProtocolError {
  try {
    weighCbor(body, maxItems);
  } catch (e) {
    if (e instanceof ProtocolError) return e;
    throw e;
  }
  throw new Error("weighed, not refused");
}

/** The decoded value being measured: held here, and let go before the next is measured. */
let decoded: unknown = null;

/** Heap bytes the decoded value of `body` holds, with garbage collected before and after. */
function heldByDecoding(body: Uint8Array): number {
  decoded = null;
  gc();
  gc();
  const before = process.memoryUsage();
  decoded = decodeCbor(body);
  gc();
  gc();
  const after = process.memoryUsage();
  expect(decoded).not.toBeNull();
  decoded = null;
  return after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers);
}

const hash = new Uint8Array(32).fill(7);
/** Heap the test's own runtime may allocate during a measurement. */
const NOISE = 64 * 1024;
const N = LIMITS.maxBodyItems - 10;

describe("weighCbor", () => {
  it("counts every map, key, value and element", () => {
    expect(weighCbor(encodeCbor({ a: [hash, hash] }), 10).items).toBe(5);
    expect(weighCbor(encodeCbor([]), 10).items).toBe(1);
    expect(weighCbor(encodeCbor({ path: "a", chunks: [[1, [2]]] }), 20).items).toBe(9);
  });

  it("refuses a body past maxItems before reading the rest, naming the limit", () => {
    const body = encodeCbor(Array(1000).fill(hash));
    expect(weighCbor(body, 1001).items).toBe(1001);
    const e = refusal(body, 1000);
    expect(e.code).toBe("payload_too_large");
    expect(e.details).toEqual({ field: "body", limit: 1000 });
    // Cut short after the limit: refused for its items, not for the missing bytes.
    expect(refusal(body.subarray(0, 2000), 10).code).toBe("payload_too_large");
  });

  it("refuses malformed CBOR, tags, indefinite lengths and deep nesting as bad_request", () => {
    const cases: [string, number[]][] = [
      ["empty", []],
      ["cut short", [0x82, 0x01]],
      ["trailing bytes", [0x01, 0x00]],
      ["a reserved initial byte", [0x1c]],
      ["a tag", [0xc1, 0x1a, 0, 0, 0, 1]],
      ["an indefinite array", [0x9f, 0x01, 0xff]],
      ["an indefinite byte string", [0x5f, 0x41, 0x00, 0xff]],
      ["a stray break", [0xff]],
      ["a byte string claiming 4 GiB", [0x5a, 0xff, 0xff, 0xff, 0xff, 0x00]],
      ["an array claiming more items than bytes", [0x9a, 0x00, 0x10, 0x00, 0x00, 0x01]],
      ["arrays nested 33 deep", Array(33).fill(0x81).concat([0x01])],
    ];
    for (const [name, bytes] of cases) expect(refusal(new Uint8Array(bytes)).code, name).toBe("bad_request");
    expect(weighCbor(new Uint8Array([...Array(31).fill(0x81), 0x01]), 100).items).toBe(32);
  });

  it("is an upper bound on the heap decoding holds, for every kind of item", () => {
    const entry = (i: number) => ({
      path: `dir/file-${i}.txt`,
      kind: "file",
      mode: 0o644,
      mtime: 1_700_000_000_000 + i,
      size: 10,
      chunks: [hash],
      base: i,
    });
    const shapes: Record<string, unknown> = {
      "32-byte hashes": Array(N).fill(hash),
      "empty byte strings": Array(N).fill(new Uint8Array(0)),
      "empty maps": Array.from({ length: N }, () => ({})),
      "small integers": Array(N).fill(5),
      "integers past 2^31": Array.from({ length: N }, (_, i) => 2 ** 40 + i),
      "empty byte strings and maps": Array.from({ length: N }, (_, i) => (i % 2 ? {} : new Uint8Array(0))),
      "negative integers past 2^53": Array(N).fill(-(2n ** 60n)),
      "distinct short texts": Array.from({ length: N }, (_, i) => `p${i}`),
      "nested arrays": Array.from({ length: N / 3 }, () => [[]]),
      "maps of distinct keys": Array.from({ length: N / 41 }, (_, j) =>
        Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key-${i}-${j}`, i])),
      ),
      "one map of distinct keys": Object.fromEntries(Array.from({ length: N / 2 }, (_, i) => [`k${i}`, true])),
      "push entries": { entries: Array.from({ length: Math.floor(N / 16) }, (_, i) => entry(i)) },
      "one long text": "x".repeat(LIMITS.maxBodyBytes - 16),
    };
    const floats = new Uint8Array(1 + 4 + 9 * N);
    floats.set([0x9a, (N >>> 24) & 0xff, (N >>> 16) & 0xff, (N >>> 8) & 0xff, N & 0xff]);
    for (let i = 0; i < N; i++) floats.set([0xfb, 0x3f, 0xf8 + (i % 8), 1, 2, 3, 4, 5, i & 0xff], 5 + 9 * i);
    const bodies: [string, Uint8Array][] = [
      ...Object.entries(shapes).map(([name, v]): [string, Uint8Array] => [name, encodeCbor(v)]),
      ["floats", floats],
    ];
    for (const [name, body] of bodies) {
      const weight = weighCbor(body, LIMITS.maxBodyItems);
      const held = heldByDecoding(body);
      // Less what the test's own runtime allocates meanwhile (a few hundred bytes seen).
      expect(held - NOISE, `${name}: ${weight.items} items weigh ${weight.bytes} bytes`).toBeLessThanOrEqual(
        weight.bytes,
      );
    }
  });
});

describe("reading a socket frame before decoding it", () => {
  it("finds a request frame's id wherever its key lies", () => {
    expect(peekFrameId(encodeCbor({ id: 7, op: "push", body: { entries: [hash] } }))).toBe(7);
    expect(peekFrameId(encodeCbor({ op: "push", body: { id: 3, entries: [[hash]] }, id: 2 ** 40 }))).toBe(2 ** 40);
    expect(peekFrameId(encodeCbor({ op: "push", body: {} }))).toBeNull();
    expect(peekFrameId(encodeCbor({ id: "7" }))).toBeNull();
    expect(peekFrameId(new Uint8Array([0xa2, 0x62, 0x69, 0x64]))).toBeNull();
  });

  it("knows an ack frame, and nothing else, for one", () => {
    expect(isAckFrame(encodeCbor({ ack: new Uint8Array(8) }))).toBe(true);
    expect(isAckFrame(encodeCbor({ ack: new Uint8Array(9) }))).toBe(false);
    expect(isAckFrame(encodeCbor({ ack: new Uint8Array(8), op: "push" }))).toBe(false);
    expect(isAckFrame(encodeCbor({ act: new Uint8Array(8) }))).toBe(false);
    expect(isAckFrame(new Uint8Array([...encodeCbor({ ack: new Uint8Array(8) }), 0]))).toBe(false);
  });
});
