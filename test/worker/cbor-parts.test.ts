import { describe, expect, it } from "vitest";

import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { CborParts, concatBytes } from "../../protocol/cbor-parts.ts";
import { sha256 } from "../../protocol/hash.ts";
import {
  decodeGetObjectsResponse,
  encodeGetObjectsResponse,
  type ObjectBlob,
  writePutObjectsRequest,
} from "../../protocol/objects.ts";
import { REQUEST_ENCODERS } from "../../protocol/ops.ts";
import { encodeRequestFrame } from "../../protocol/ws.ts";
import { freshWorkspace } from "./helpers.ts";

async function objectsOf(sizes: readonly number[]): Promise<ObjectBlob[]> {
  return Promise.all(
    sizes.map(async (size, i) => {
      const bytes = new Uint8Array(size).map((_, j) => (i * 31 + j * 7) & 0xff);
      return { hash: await sha256(bytes), bytes };
    }),
  );
}

describe("an upload body written as parts", () => {
  // Every length class of a CBOR head: under 24, one, two and four bytes, and an empty body.
  const sizes = [0, 1, 23, 24, 255, 256, 4095, 4096, 65_535, 65_536, 1024 * 1024];

  it("is byte for byte the single buffer encodeCbor writes, with large bytes referenced", async () => {
    const objects = await objectsOf(sizes);
    const { parts, byteLength } = writePutObjectsRequest(new CborParts(), { objects }).finish();
    const whole = encodeCbor({ objects: objects.map((o) => ({ hash: o.hash, bytes: o.bytes })) });
    expect(byteLength).toBe(whole.byteLength);
    // Compared by digest: a deep comparison of 1 MiB arrays takes vitest seconds.
    expect(await sha256(concatBytes(parts))).toEqual(await sha256(whole));
    // The objects of 4 KiB or more are the caller's own buffers, not copies.
    const referenced = objects.filter((o) => o.bytes.byteLength >= 4096);
    expect(referenced.every((o) => parts.includes(o.bytes))).toBe(true);
    expect(
      writePutObjectsRequest(new CborParts(), { objects: [] })
        .finish()
        .parts.map((p) => [...p]),
    ).toEqual([[...encodeCbor({ objects: [] })]]);
  });

  it("is stored by the object like any upload", async () => {
    const objects = await objectsOf(sizes);
    const ws = freshWorkspace();
    const res = await ws.serve(
      "putObjects",
      concatBytes(writePutObjectsRequest(new CborParts(), { objects }).finish().parts),
    );
    expect(decodeCbor(new Uint8Array(await res.arrayBuffer()))).toEqual({ stored: sizes.length, present: 0 });
  });
});

describe("an objects/get answer written to its exact size", () => {
  it("is byte for byte what encodeCbor writes", async () => {
    const objects = await objectsOf([0, 30, 300, 5000, 70_000, 1024 * 1024]);
    const missing = [objects[0]?.hash as Uint8Array, new Uint8Array(32)];
    const res = { objects, missing };
    const exact = encodeGetObjectsResponse(res);
    expect(await sha256(exact)).toEqual(await sha256(encodeCbor(res)));
    expect(decodeGetObjectsResponse(decodeCbor(exact)).objects.map((o) => o.bytes.byteLength)).toEqual(
      objects.map((o) => o.bytes.byteLength),
    );
  });
});

describe("an upload's socket frame", () => {
  it("is byte for byte the frame encodeCbor writes", async () => {
    const objects = await objectsOf([10, 5000, 300_000]);
    const frame = encodeRequestFrame(70_000, "putObjects", { objects });
    const whole = encodeCbor({ id: 70_000, op: "putObjects", body: REQUEST_ENCODERS.putObjects({ objects }) });
    expect(await sha256(frame)).toEqual(await sha256(whole));
  });
});
