/**
 * Hash lists on the host side (protocol version 2): how the transports build
 * them, how the answers to them are read, and what an older or newer peer
 * hears, over both transports against the real server.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../../protocol/errors.ts";
import { decodeHasResponse } from "../../protocol/has.ts";
import { hashAt, hashCount, joinHashes, splitHashes } from "../../protocol/hash.ts";
import { getObjectsFields } from "../../protocol/objects.ts";
import { MIN_PROTOCOL_VERSION, PROTOCOL_VERSION } from "../../protocol/version.ts";
import { endpointFor, newWorkspace, TRANSPORTS } from "./support/hosts.ts";

const hashes = [randomBytes(32), randomBytes(32), randomBytes(32)].map((b) => new Uint8Array(b));

function refusal(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProtocolError) return e;
    throw e;
  }
  throw new Error("expected a ProtocolError");
}

describe("hash lists", () => {
  it("join into one buffer and split back into views of it, not copies", () => {
    const list = joinHashes(hashes);
    expect(list.byteLength).toBe(96);
    expect(hashCount(list)).toBe(3);
    expect(splitHashes(list)).toEqual(hashes);
    expect(hashAt(list, 2).buffer).toBe(list.buffer);
    expect(hashAt(list, 2).byteOffset).toBe(64);
  });

  it("refuse to join a hash that is not 32 bytes, which would shift the ones after it", () => {
    expect(() => joinHashes([hashes[0] as Uint8Array, new Uint8Array(31)])).toThrow(/hash 1 has 31 bytes/);
  });

  it("go on the wire of objects/get as one byte string, maxBytes kept", () => {
    expect(getObjectsFields({ hashes, maxBytes: 10 })).toEqual({ hashes: joinHashes(hashes), maxBytes: 10 });
    expect(getObjectsFields({ hashes })).toEqual({ hashes: joinHashes(hashes) });
  });
});

describe("decodeHasResponse", () => {
  it("reads one byte per hash", () => {
    expect(decodeHasResponse({ have: new Uint8Array([1, 0, 1]) }).have).toEqual(new Uint8Array([1, 0, 1]));
  });

  it("refuses an array of booleans (version 1's answer) with bad_request", () => {
    const e = refusal(() => decodeHasResponse({ have: [true, false] }));
    expect(e.code).toBe("bad_request");
    expect(e.details).toEqual({ field: "have" });
  });

  it("refuses a byte other than 0 or 1, naming where", () => {
    const e = refusal(() => decodeHasResponse({ have: new Uint8Array([0, 1, 2]) }));
    expect(e.code).toBe("bad_request");
    expect(e.message).toBe("have[2]: expected 0 or 1");
  });
});

for (const { name, factory } of TRANSPORTS) {
  describe(`hash lists over ${name}`, () => {
    it("probe a list and fetch by one, against the real server", async () => {
      const t = factory(endpointFor(newWorkspace()));
      try {
        const hostId = new Uint8Array(randomBytes(16));
        await t.call("hello", { version: PROTOCOL_VERSION, hostId, hostRev: 0, capabilities: [] });
        const bytes = new TextEncoder().encode(`held over ${name}`);
        const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
        await t.call("putObjects", { objects: [{ hash, bytes }] });
        const { have } = await t.call("has", { hashes: joinHashes([hashes[0] as Uint8Array, hash]) });
        expect(have).toEqual(new Uint8Array([0, 1]));
        const got = await t.call("getObjects", { hashes: [hashes[1] as Uint8Array, hash] });
        expect(got.objects).toEqual([{ hash, bytes }]);
        expect(got.missing).toEqual([hashes[1]]);
      } finally {
        await t.close();
      }
    });

    it("rethrows unsupported_version with the server's range to a version-1 host", async () => {
      const t = factory(endpointFor(newWorkspace()));
      try {
        const hostId = new Uint8Array(randomBytes(16));
        const e = await t.call("hello", { version: 1, hostId, hostRev: 0, capabilities: [] }).then(
          () => null,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(ProtocolError);
        expect((e as ProtocolError).code).toBe("unsupported_version");
        expect((e as ProtocolError).details).toMatchObject({ min: MIN_PROTOCOL_VERSION, max: PROTOCOL_VERSION });
      } finally {
        await t.close();
      }
    });
  });
}
