import { describe, expect, it } from "vitest";

import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { CborParts, concatBytes } from "../../protocol/cbor-parts.ts";
import { joinHashes, sha256 } from "../../protocol/hash.ts";
import { ID_BYTES, REV_ID_BYTES } from "../../protocol/hello.ts";
import {
  decodeGetObjectsResponse,
  encodeGetObjectsResponse,
  type ObjectBlob,
  writePutObjectsRequest,
} from "../../protocol/objects.ts";
import { encodeRequestBody } from "../../protocol/ops.ts";
import { decodePushRequest, type PushEntry, type PushRequest } from "../../protocol/push.ts";
import { encodeRequestFrame } from "../../protocol/ws.ts";
import { freshWorkspace, pushEntryMap } from "./helpers.ts";

/** A push request as the map of its fields: the reference its writer (push.ts writePushRequest) is held to. */
function pushMap(req: PushRequest): Record<string, unknown> {
  return {
    hostId: req.hostId,
    start: req.start,
    end: req.end,
    entries: req.entries.map(pushEntryMap),
    ...(req.objects.length > 0 ? { objects: req.objects.map((o) => ({ hash: o.hash, bytes: o.bytes })) } : {}),
    ...(req.pulled !== undefined ? { pulled: req.pulled } : {}),
    ...(req.pulledId ? { pulledId: req.pulledId } : {}),
  };
}

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
      "rw",
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
    const whole = encodeCbor({ id: 70_000, op: "putObjects", body: { objects } });
    expect(await sha256(frame)).toEqual(await sha256(whole));
  });
});

describe("a push body written as parts", () => {
  const hash = (n: number) => new Uint8Array(32).fill(n);
  // Every kind, with and without `base`; integers in every head length, negative and past 32 bits;
  // paths of every text head length, and not ASCII.
  const entries: PushEntry[] = [
    { kind: "file", path: "a", mode: 0o644, mtime: 1_700_000_000_123, size: 0, chunks: joinHashes([]) },
    {
      kind: "file",
      path: "é/日本.txt",
      mode: 0o755,
      mtime: -1,
      size: 2 ** 33,
      chunks: joinHashes([hash(1), hash(2)]),
      base: 0,
    },
    { kind: "file", path: "p".repeat(24), mode: 0, mtime: -25, size: 23, chunks: hash(3), base: 2 ** 32 + 5 },
    { kind: "dir", path: "d".repeat(255), mode: 0o700, mtime: 0, base: 24 },
    { kind: "dir", path: "d".repeat(256), mode: 0o755, mtime: -1_700_000_000_000 },
    { kind: "symlink", path: "s".repeat(4096), target: "../t", base: 65_536 },
    { kind: "symlink", path: "l", target: "ü".repeat(30) },
    { kind: "gone", path: "g", base: 255 },
    { kind: "gone", path: "h" },
  ];
  const request: PushRequest = {
    hostId: new Uint8Array(ID_BYTES).fill(9),
    start: { rev: 0, path: null },
    end: { rev: 70_000, path: "é/日本.txt" },
    entries,
    objects: [],
  };

  it("is byte for byte what encodeCbor writes of its fields, bare and in a socket frame", async () => {
    const cases: PushRequest[] = [
      request,
      { ...request, pulled: 0 },
      { ...request, start: { rev: 3, path: "a" }, pulled: 2 ** 32, pulledId: new Uint8Array(REV_ID_BYTES).fill(7) },
      { ...request, entries: [], objects: await objectsOf([10, 5000, 300_000]), pulled: 12 },
    ];
    for (const req of cases) {
      const whole = encodeCbor(pushMap(req));
      expect(await sha256(concatBytes(encodeRequestBody("push", req).parts))).toEqual(await sha256(whole));
      const frame = encodeCbor({ id: 70_000, op: "push", body: pushMap(req) });
      expect(await sha256(encodeRequestFrame(70_000, "push", req))).toEqual(await sha256(frame));
    }
  });

  it("references inline objects' large bytes rather than copying them", async () => {
    const objects = await objectsOf([300_000]);
    const { parts } = encodeRequestBody("push", { ...request, objects });
    expect(parts).toContain(objects[0]?.bytes);
  });

  it("writes -2^32 in the shortest head, where encodeCbor takes eight bytes: the same value decoded", () => {
    const req: PushRequest = { ...request, entries: [{ kind: "dir", path: "x", mode: 0, mtime: -(2 ** 32) }] };
    const written = concatBytes(encodeRequestBody("push", req).parts);
    expect(decodePushRequest(decodeCbor(written))).toEqual(decodePushRequest(decodeCbor(encodeCbor(pushMap(req)))));
    expect(written.byteLength).toBe(encodeCbor(pushMap(req)).byteLength - 4);
  });

  it("refuses a number that is not a safe integer rather than truncating it", () => {
    const req: PushRequest = { ...request, entries: [{ kind: "dir", path: "x", mode: 0, mtime: 1.5 }] };
    expect(() => encodeRequestBody("push", req)).toThrow(RangeError);
  });
});
