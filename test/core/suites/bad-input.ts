/**
 * Every operation answers bad input with its error code, never a 500, and
 * leaves stored state exactly as it was.
 */

import { beforeAll, describe, expect, it } from "vitest";
import { encodeCbor } from "../../../protocol/cbor.ts";
import { ORIGIN } from "../../../protocol/cursor.ts";
import { ERROR_STATUS, type ErrorCode } from "../../../protocol/errors.ts";
import { joinHashes } from "../../../protocol/hash.ts";
import { LIMITS } from "../../../protocol/limits.ts";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import type { OpName } from "../../../protocol/ops.ts";
import { MIN_PROTOCOL_VERSION, PROTOCOL_VERSION } from "../../../protocol/version.ts";
import { callRaw, freshWorkspace, randomId, smallFile, stats, TestHost } from "../helpers.ts";

type Body = Record<string, unknown>;
interface Case {
  readonly name: string;
  /** A CBOR value to encode, or raw bytes sent as they are. */
  readonly body: () => unknown;
  readonly code: ErrorCode;
}

const hash = new Uint8Array(32).fill(1);
// Set in beforeAll: a small file entry and its object, for bodies built later.
let object: ObjectBlob = { hash, bytes: new Uint8Array() };
let file: Body = {};

export function badInputSuite(): void {
  beforeAll(async () => {
    const f = await smallFile("new.txt", "new");
    object = f.object;
    // As a push carries it: the chunks one hash list (protocol version 4).
    file = { ...f.entry, chunks: joinHashes(f.entry.chunks) };
  });

  const VALID: Record<OpName, () => Body> = {
    hello: () => ({ version: PROTOCOL_VERSION, hostId: randomId(), hostRev: 0, capabilities: [] }),
    has: () => ({ hashes: hash }),
    putObjects: () => ({ objects: [object] }),
    getObjects: () => ({ hashes: hash }),
    push: () => ({
      hostId: randomId(),
      start: ORIGIN,
      end: { rev: 1, path: null },
      entries: [file],
      objects: [object],
    }),
    changes: () => ({ after: ORIGIN }),
    log: () => ({ path: "seed/file.txt" }),
    snapshot: () => ({ path: "seed", rev: 1 }),
  };

  /** The valid request of `op` with `change` applied to it. */
  const withFields = (op: OpName, change: Body) => () => ({ ...VALID[op](), ...change });
  const withoutField = (op: OpName, field: string) => () => {
    const body = VALID[op]();
    delete body[field];
    return body;
  };
  /** A push whose one entry is the valid file with `change` applied. */
  const withEntry = (change: Body) => () => ({ ...VALID.push(), entries: [{ ...file, ...change }] });
  const withEntries = (entries: () => unknown[]) => () => ({ ...VALID.push(), entries: entries() });
  const raw = (bytes: number[]) => () => new Uint8Array(bytes);
  /** Valid CBOR whose text string "a?b" has its middle byte replaced by one that is not UTF-8. */
  const invalidUtf8Path = () => {
    const bytes = encodeCbor({ ...VALID.push(), entries: [{ ...file, path: "a?b" }] });
    const at = bytes.findIndex(
      (b, i) => b === 0x63 && bytes[i + 1] === 0x61 && bytes[i + 2] === 0x3f && bytes[i + 3] === 0x62,
    );
    bytes[at + 2] = 0xff;
    return bytes;
  };
  const NEG_2_64 = -(2n ** 64n) + 1n;

  function malformed(op: OpName): Case[] {
    const valid = () => encodeCbor(VALID[op]());
    return [
      { name: "an empty body", body: raw([]), code: "bad_request" },
      { name: "truncated CBOR", body: () => valid().slice(0, Math.floor(valid().byteLength / 2)), code: "bad_request" },
      {
        name: "trailing bytes after the CBOR item",
        body: () => new Uint8Array([...valid(), 0x00]),
        code: "bad_request",
      },
      { name: "a reserved CBOR initial byte", body: raw([0x1c]), code: "bad_request" },
      { name: "an array instead of a map", body: () => [VALID[op]()], code: "bad_request" },
      { name: "a text string instead of a map", body: () => "hello", code: "bad_request" },
      { name: "null instead of a map", body: () => null, code: "bad_request" },
      // log's fields are all optional: its empty map asks for the workspace's revs.
      ...(op === "log" ? [] : [{ name: "an empty map", body: () => ({}), code: "bad_request" as const }]),
      { name: "a tagged date instead of a map", body: raw([0xc1, 0x1a, 0, 0, 0, 1]), code: "bad_request" },
      { name: "arrays nested 100,000 deep", body: () => new Uint8Array(100_000).fill(0x81), code: "bad_request" },
      { name: "a byte string claiming 4 GiB", body: raw([0x5a, 0xff, 0xff, 0xff, 0xff, 0x00]), code: "bad_request" },
    ];
  }

  /** A hash list (has, objects/get) is one byte string of concatenated 32-byte hashes, at most maxHas. */
  function hashListCases(op: "has" | "getObjects"): Case[] {
    const hashes = (list: unknown) => withFields(op, { hashes: list });
    return [
      { name: "a missing hashes field", body: withoutField(op, "hashes"), code: "bad_request" },
      { name: "hashes that are a map", body: hashes({ 0: hash }), code: "bad_request" },
      { name: "hashes that are an integer", body: hashes(32), code: "bad_request" },
      { name: "a hex text list", body: hashes("01".repeat(32)), code: "bad_request" },
      { name: "a 31-byte list", body: hashes(new Uint8Array(31)), code: "bad_request" },
      { name: "a 33-byte list", body: hashes(new Uint8Array(33)), code: "bad_request" },
      { name: "a list one byte short of 100 hashes", body: hashes(new Uint8Array(3199)), code: "bad_request" },
      { name: "a list of 100,001 hashes", body: hashes(new Uint8Array(100_001 * 32)), code: "payload_too_large" },
      // Version 1's form: the server names the versions it speaks instead of a bare bad_request.
      { name: "an array of hashes", body: hashes([hash, hash]), code: "unsupported_version" },
      { name: "an empty array", body: hashes([]), code: "unsupported_version" },
    ];
  }

  const CASES: Record<OpName, Case[]> = {
    hello: [
      { name: "a missing version", body: withoutField("hello", "version"), code: "bad_request" },
      { name: "a text version", body: withFields("hello", { version: "1" }), code: "bad_request" },
      { name: "a negative version", body: withFields("hello", { version: -1 }), code: "bad_request" },
      { name: "a fractional version", body: withFields("hello", { version: 1.5 }), code: "bad_request" },
      { name: "a version of 2^64 - 1", body: withFields("hello", { version: 2n ** 64n - 1n }), code: "bad_request" },
      { name: "an unsupported version", body: withFields("hello", { version: 999 }), code: "unsupported_version" },
      { name: "a 15-byte host id", body: withFields("hello", { hostId: new Uint8Array(15) }), code: "bad_request" },
      { name: "a text host id", body: withFields("hello", { hostId: "host" }), code: "bad_request" },
      { name: "a hostRev of 1 - 2^64", body: withFields("hello", { hostRev: NEG_2_64 }), code: "bad_request" },
      { name: "a negative hostRev", body: withFields("hello", { hostRev: -5 }), code: "bad_request" },
      {
        name: "a 17-byte pull epoch",
        body: withFields("hello", { pull: { epoch: new Uint8Array(17), cursor: ORIGIN } }),
        code: "bad_request",
      },
      {
        name: "an absolute pull cursor path",
        body: withFields("hello", { pull: { epoch: randomId(), cursor: { rev: 1, path: "/etc" } } }),
        code: "invalid_path",
      },
      {
        name: "a path in rev 0",
        body: withFields("hello", { pull: { epoch: randomId(), cursor: { rev: 0, path: "a" } } }),
        code: "bad_request",
      },
      {
        name: "capabilities that are not an array",
        body: withFields("hello", { capabilities: "ws" }),
        code: "bad_request",
      },
      { name: "a capability that is not text", body: withFields("hello", { capabilities: [1] }), code: "bad_request" },
      {
        name: "65 capabilities",
        body: withFields("hello", { capabilities: Array(65).fill("x") }),
        code: "payload_too_large",
      },
    ],
    has: hashListCases("has"),
    putObjects: [
      { name: "objects that are not an array", body: withFields("putObjects", { objects: "x" }), code: "bad_request" },
      { name: "an object without a hash", body: () => ({ objects: [{ bytes: object.bytes }] }), code: "bad_request" },
      { name: "text bytes", body: () => ({ objects: [{ hash: object.hash, bytes: "new" }] }), code: "bad_request" },
      {
        name: "a 31-byte hash",
        body: () => ({ objects: [{ hash: new Uint8Array(31), bytes: object.bytes }] }),
        code: "bad_request",
      },
      { name: "4,097 objects", body: () => ({ objects: Array(4097).fill(object) }), code: "payload_too_large" },
      {
        name: "bytes that do not match the hash",
        body: () => ({ objects: [object, { hash: object.hash, bytes: new Uint8Array([1]) }] }),
        code: "hash_mismatch",
      },
      {
        name: "an object over 1 MiB",
        body: () => ({ objects: [{ hash, bytes: new Uint8Array(1024 * 1024 + 1) }] }),
        code: "payload_too_large",
      },
    ],
    getObjects: [
      ...hashListCases("getObjects"),
      { name: "a negative maxBytes", body: withFields("getObjects", { maxBytes: -1 }), code: "bad_request" },
      { name: "a fractional maxBytes", body: withFields("getObjects", { maxBytes: 1.5 }), code: "bad_request" },
      { name: "a text maxBytes", body: withFields("getObjects", { maxBytes: "1" }), code: "bad_request" },
    ],
    push: [
      { name: "a missing host id", body: withoutField("push", "hostId"), code: "bad_request" },
      { name: "a 17-byte host id", body: withFields("push", { hostId: new Uint8Array(17) }), code: "bad_request" },
      { name: "a missing start", body: withoutField("push", "start"), code: "bad_request" },
      { name: "a start that is not a map", body: withFields("push", { start: 0 }), code: "bad_request" },
      { name: "an end equal to start", body: withFields("push", { end: ORIGIN }), code: "bad_request" },
      {
        name: "an end before start",
        body: withFields("push", { start: { rev: 2, path: null }, end: { rev: 1, path: null } }),
        code: "bad_request",
      },
      {
        name: "an invalid start path",
        body: withFields("push", { start: { rev: 1, path: "a//b" } }),
        code: "invalid_path",
      },
      { name: "missing entries", body: withoutField("push", "entries"), code: "bad_request" },
      { name: "entries that are not an array", body: withFields("push", { entries: file }), code: "bad_request" },
      { name: "an entry that is not a map", body: withEntries(() => ["new.txt"]), code: "bad_request" },
      { name: "an entry without a path", body: withEntry({ path: undefined }), code: "bad_request" },
      { name: "an absolute path", body: withEntry({ path: "/etc/passwd" }), code: "invalid_path" },
      { name: "a '..' segment", body: withEntry({ path: "a/../../etc" }), code: "invalid_path" },
      { name: "a '.' segment", body: withEntry({ path: "./a" }), code: "invalid_path" },
      { name: "a path of '..'", body: withEntry({ path: ".." }), code: "invalid_path" },
      { name: "a NUL in the path", body: withEntry({ path: "a\0b" }), code: "invalid_path" },
      { name: "a path not in NFC", body: withEntry({ path: "cafe\u0301" }), code: "invalid_path" },
      { name: "a 256-byte segment", body: withEntry({ path: `d/${"x".repeat(256)}` }), code: "invalid_path" },
      { name: "a 4,097-byte path", body: withEntry({ path: Array(2049).fill("x").join("/") }), code: "invalid_path" },
      { name: "U+FFFD in the path", body: withEntry({ path: "a\uFFFDb" }), code: "invalid_path" },
      { name: "bytes that are not UTF-8 in the path", body: invalidUtf8Path, code: "invalid_path" },
      { name: "an empty path", body: withEntry({ path: "" }), code: "invalid_path" },
      { name: "a trailing slash", body: withEntry({ path: "a/" }), code: "invalid_path" },
      { name: "an empty segment", body: withEntry({ path: "a//b" }), code: "invalid_path" },
      // ferry's own names on a host, at any depth and of any kind: stored, every host would refuse them on each pull.
      { name: "a path in the store '.ferry'", body: withEntry({ path: ".ferry/store.db" }), code: "invalid_path" },
      { name: "a path of '.ferry'", body: withEntry({ path: ".ferry" }), code: "invalid_path" },
      { name: "a '.ferry' directory below", body: withEntry({ path: "sub/.ferry" }), code: "invalid_path" },
      { name: "a temporary '.ferry-tmp-' file", body: withEntry({ path: "a/.ferry-tmp-1-2" }), code: "invalid_path" },
      { name: "a path in '.ferry-server'", body: withEntry({ path: ".ferry-server/do/x" }), code: "invalid_path" },
      {
        name: "a tombstone of '.ferry'",
        body: withEntries(() => [{ kind: "gone", path: "seed/.ferry" }]),
        code: "invalid_path",
      },
      {
        name: "a '.ferry-tmp-' directory",
        body: withEntries(() => [{ kind: "dir", path: ".ferry-tmp-x", mode: 0o755, mtime: 0 }]),
        code: "invalid_path",
      },
      {
        name: "a symlink at '.ferry'",
        body: withEntries(() => [{ kind: "symlink", path: "d/.ferry", target: "elsewhere" }]),
        code: "invalid_path",
      },
      {
        name: "a '.ferry' path after a valid entry",
        body: withEntries(() => [file, { kind: "gone", path: ".ferry" }]),
        code: "invalid_path",
      },
      { name: "a path that is not text", body: withEntry({ path: new Uint8Array([0x61]) }), code: "bad_request" },
      { name: "an unknown kind", body: withEntry({ kind: "fifo" }), code: "bad_request" },
      { name: "a missing kind", body: withEntry({ kind: undefined }), code: "bad_request" },
      { name: "a mode with type bits", body: withEntry({ mode: 0o100644 }), code: "bad_request" },
      { name: "a negative mode", body: withEntry({ mode: -1 }), code: "bad_request" },
      { name: "a fractional mtime", body: withEntry({ mtime: 1.5 }), code: "bad_request" },
      { name: "an mtime of 1 - 2^64", body: withEntry({ mtime: NEG_2_64 }), code: "bad_request" },
      { name: "a negative size", body: withEntry({ size: -1 }), code: "bad_request" },
      { name: "chunks that are not a hash list", body: withEntry({ chunks: "hash" }), code: "bad_request" },
      { name: "a 31-byte chunk hash", body: withEntry({ chunks: new Uint8Array(31) }), code: "bad_request" },
      {
        name: "chunks as an array (version 3's form)",
        body: withEntry({ chunks: [hash] }),
        code: "unsupported_version",
      },
      {
        name: "an empty symlink target",
        body: withEntries(() => [{ kind: "symlink", path: "l", target: "" }]),
        code: "bad_request",
      },
      {
        name: "a NUL in a symlink target",
        body: withEntries(() => [{ kind: "symlink", path: "l", target: "a\0b" }]),
        code: "bad_request",
      },
      {
        name: "a 4,096-byte symlink target",
        body: withEntries(() => [{ kind: "symlink", path: "l", target: "x".repeat(4096) }]),
        code: "bad_request",
      },
      {
        name: "U+FFFD in a symlink target",
        body: withEntries(() => [{ kind: "symlink", path: "l", target: "a\uFFFDb" }]),
        code: "bad_request",
      },
      { name: "a size its chunks do not add up to", body: withEntry({ size: 4 }), code: "bad_request" },
      { name: "duplicate paths", body: withEntries(() => [file, { ...file, mode: 0o600 }]), code: "bad_request" },
      {
        name: "a 15-byte pulledId",
        body: withFields("push", { pulled: 1, pulledId: new Uint8Array(15) }),
        code: "bad_request",
      },
      {
        name: "a pulledId of another history",
        body: withFields("push", { pulled: 1, pulledId: randomId() }),
        code: "cursor_mismatch",
      },
      { name: "a negative base", body: withEntry({ base: -1 }), code: "bad_request" },
      { name: "a text base", body: withEntry({ base: "1" }), code: "bad_request" },
      {
        name: "10,001 entries",
        body: withEntries(() => Array.from({ length: 10_001 }, (_, i) => ({ kind: "gone", path: `p${i}` }))),
        code: "payload_too_large",
      },
      {
        name: "an inline object that does not match its hash",
        body: withFields("push", { objects: [{ hash: object.hash, bytes: new Uint8Array([9]) }] }),
        code: "hash_mismatch",
      },
      {
        name: "an entry naming an object the server lacks",
        body: withFields("push", { objects: [] }),
        code: "missing_objects",
      },
    ],
    changes: [
      { name: "a missing after", body: withoutField("changes", "after"), code: "bad_request" },
      {
        name: "a negative after rev",
        body: withFields("changes", { after: { rev: -1, path: null } }),
        code: "bad_request",
      },
      {
        name: "a fractional after rev",
        body: withFields("changes", { after: { rev: 0.5, path: null } }),
        code: "bad_request",
      },
      {
        name: "a '..' after path",
        body: withFields("changes", { after: { rev: 1, path: "../x" } }),
        code: "invalid_path",
      },
      { name: "a path in rev 0", body: withFields("changes", { after: { rev: 0, path: "a" } }), code: "bad_request" },
      { name: "a negative limit", body: withFields("changes", { limit: -1 }), code: "bad_request" },
      { name: "a text limit", body: withFields("changes", { limit: "10" }), code: "bad_request" },
      { name: "a 15-byte epoch", body: withFields("changes", { epoch: new Uint8Array(15) }), code: "bad_request" },
      { name: "a 17-byte host id", body: withFields("changes", { hostId: new Uint8Array(17) }), code: "bad_request" },
      {
        name: "an epoch of another history",
        body: withFields("changes", { epoch: randomId() }),
        code: "cursor_mismatch",
      },
      { name: "a 17-byte revId", body: withFields("changes", { revId: new Uint8Array(17) }), code: "bad_request" },
      {
        name: "a revId of another history",
        body: withFields("changes", { after: { rev: 1, path: null }, revId: randomId() }),
        code: "cursor_mismatch",
      },
    ],
    log: [
      { name: "a '..' path", body: withFields("log", { path: "a/../b" }), code: "invalid_path" },
      { name: "an empty path", body: withFields("log", { path: "" }), code: "invalid_path" },
      { name: "a negative before", body: withFields("log", { before: -1 }), code: "bad_request" },
      { name: "a text limit", body: withFields("log", { limit: "10" }), code: "bad_request" },
    ],
    snapshot: [
      { name: "a missing rev", body: withoutField("snapshot", "rev"), code: "bad_request" },
      { name: "a rev after the current one", body: withFields("snapshot", { rev: 99 }), code: "bad_request" },
      { name: "a leading '/' path", body: withFields("snapshot", { path: "/seed" }), code: "invalid_path" },
      { name: "a NUL in after", body: withFields("snapshot", { after: "a\u0000b" }), code: "invalid_path" },
    ],
  };

  for (const op of Object.keys(CASES) as OpName[]) {
    describe(`${op} with bad input`, () => {
      for (const c of [...malformed(op), ...CASES[op]]) {
        it(`answers ${c.name} with ${c.code} and changes nothing`, async () => {
          const ws = freshWorkspace();
          const seed = await smallFile("seed/file.txt", "seed");
          await new TestHost(ws).push(
            [{ kind: "dir", path: "seed", mode: 0o755, mtime: 0 }, seed.entry],
            [seed.object],
          );
          const before = await stats(ws);
          const body = c.body();
          const answer = await callRaw(ws, op, body instanceof Uint8Array ? body : encodeCbor(body));
          expect((answer.body as { error?: { code?: string } }).error?.code).toBe(c.code);
          expect(answer.status).toBe(ERROR_STATUS[c.code]);
          expect(await stats(ws)).toEqual(before);
        });
      }
    });
  }

  describe("a refused hash list", () => {
    for (const op of ["has", "getObjects"] as const) {
      it(`names the field and the limit when ${op} asks for more than maxHas`, async () => {
        const answer = await callRaw(freshWorkspace(), op, encodeCbor({ hashes: new Uint8Array(100_001 * 32) }));
        expect(answer.status).toBe(413);
        expect((answer.body as { error: unknown }).error).toMatchObject({
          code: "payload_too_large",
          field: "hashes",
          limit: LIMITS.maxHas,
        });
      });

      it(`names the field and the length when ${op}'s list is not whole hashes`, async () => {
        const answer = await callRaw(freshWorkspace(), op, encodeCbor({ hashes: new Uint8Array(65) }));
        expect((answer.body as { error: unknown }).error).toMatchObject({
          code: "bad_request",
          field: "hashes",
          message: "hashes: expected concatenated 32-byte hashes, got 65 bytes",
        });
      });

      it(`tells a version-1 sender of ${op} which versions to speak`, async () => {
        const answer = await callRaw(freshWorkspace(), op, encodeCbor({ hashes: [hash] }));
        expect(answer.status).toBe(400);
        expect((answer.body as { error: unknown }).error).toMatchObject({
          code: "unsupported_version",
          field: "hashes",
          min: MIN_PROTOCOL_VERSION,
          max: PROTOCOL_VERSION,
        });
      });
    }
  });
}
