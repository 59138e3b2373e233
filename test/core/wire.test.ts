/**
 * protocol/ owns the wire: every request survives its encoder, CBOR and its
 * decoder unchanged; answers survive CBOR and their decoders; refusals
 * survive as the typed details a host acts on; one status table serves both
 * sides.
 */

import { describe, expect, it } from "vitest";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { conflictError } from "../../protocol/conflict.ts";
import {
  ackedOf,
  conflictsOf,
  expiredAtOf,
  isOtherHistory,
  missingOf,
  retryAfterOf,
  serverTimeOf,
} from "../../protocol/error-details.ts";
import { codeOfStatus, decodeWireError, ERROR_STATUS, ProtocolError } from "../../protocol/errors.ts";
import { encodeRequest, OPS, type OpName, type OpRequest, type OpResponse } from "../../protocol/ops.ts";
import { pushCarriesObjects, pushEntryOf } from "../../protocol/push.ts";
import {
  encodeAck,
  encodeAnswerFrame,
  encodeErrorFrame,
  encodeMark,
  encodePoke,
  encodeRequestFrame,
  MARK_BYTES,
  readHostFrame,
  readServerFrame,
} from "../../protocol/ws.ts";
import { REQUESTS, RESPONSES, SAMPLE_FILE, SAMPLE_HASHES } from "./wire-samples.ts";

const { id, h1, h2 } = SAMPLE_HASHES;
const file = SAMPLE_FILE;

/** Through the wire as a transport sends it: encoder, CBOR bytes, decoder. */
function throughWire<K extends OpName>(op: K, req: OpRequest<K>): OpRequest<K> {
  return OPS[op].decodeRequest(decodeCbor(encodeRequest(op, req)));
}

/** An answer through the object's encoder and the host's decoder. */
function answerThroughWire<K extends OpName>(op: K, answer: OpResponse<K>): OpResponse<K> {
  return OPS[op].decodeResponse(decodeCbor(OPS[op].encodeResponse(answer)));
}

describe("the wire", () => {
  for (const op of Object.keys(REQUESTS) as OpName[]) {
    it(`carries a ${op} request through its encoder and decoder unchanged`, () => {
      expect(throughWire(op, REQUESTS[op])).toEqual(REQUESTS[op]);
    });
  }

  for (const op of Object.keys(RESPONSES) as OpName[]) {
    it(`carries a ${op} answer through its encoder and decoder unchanged`, () => {
      const answer = RESPONSES[op];
      if (answer === undefined) throw new Error(`no ${op} answer`);
      expect(answerThroughWire(op, answer)).toEqual(answer);
    });
  }

  it("puts only a push entry's own fields on the wire", () => {
    const withRev = { ...pushEntryOf(file, 1), rev: 99, extra: true };
    const fields = decodeCbor(encodeRequest("push", { ...REQUESTS.push, entries: [withRev] })) as {
      entries: Record<string, unknown>[];
    };
    expect(Object.keys(fields.entries[0] ?? {}).sort()).toEqual(
      ["base", "chunks", "kind", "mode", "mtime", "path", "size"].sort(),
    );
  });

  it("carries a pushed file's chunks as one byte string, decoded as one view of the body", () => {
    const chunks = Array.from({ length: 1000 }, (_, i) => new Uint8Array(32).fill(i % 256));
    const entry = pushEntryOf({ ...file, size: 1000, chunks });
    const body = encodeRequest("push", { ...REQUESTS.push, entries: [entry], objects: [] });
    // One CBOR byte string of 32,000 bytes (head 0x59 0x7d 0x00), not an array of 1,000.
    const onWire = decodeCbor(body) as { entries: { chunks: unknown }[] };
    expect(onWire.entries[0]?.chunks).toBeInstanceOf(Uint8Array);
    const decoded = OPS.push.decodeRequest(onWire).entries[0];
    if (decoded?.kind !== "file") throw new Error("expected the file back");
    expect(decoded.chunks.byteLength).toBe(32_000);
    expect(decoded.chunks.buffer).toBe(
      onWire.entries[0]?.chunks instanceof Uint8Array ? onWire.entries[0].chunks.buffer : null,
    );
    expect(decoded.chunks).toEqual(entry.kind === "file" ? entry.chunks : null);
  });

  it("tells a push that carries objects from one that does not, without decoding it", () => {
    expect(pushCarriesObjects(encodeRequest("push", REQUESTS.push))).toBe(true);
    expect(pushCarriesObjects(encodeRequest("push", { ...REQUESTS.push, objects: [] }))).toBe(false);
    // Written by another client: the key present with an empty array or null, or objects after the entries.
    const { objects, ...rest } = REQUESTS.push;
    expect(pushCarriesObjects(encodeCbor({ ...rest, objects: [] }))).toBe(false);
    expect(pushCarriesObjects(encodeCbor({ ...rest, objects: null }))).toBe(false);
    expect(pushCarriesObjects(encodeCbor({ ...rest, objects }))).toBe(true);
    expect(pushCarriesObjects(encodeCbor({ objects, ...rest }))).toBe(true);
    // Not a push the object would read: handed to its decoder, which gives the refusal.
    expect(pushCarriesObjects(encodeCbor([1, 2]))).toBe(true);
    expect(pushCarriesObjects(new Uint8Array([0xa1, 0x01, 0x02]))).toBe(true); // {1: 2}
  });

  it("refuses a pushed file's chunks as an array, version 3's form, with the versions to speak", () => {
    const old = { ...(decodeCbor(encodeRequest("push", REQUESTS.push)) as Record<string, unknown>) };
    old.entries = [{ ...file, chunks: [h1, h2], size: 3 }];
    expect(() => OPS.push.decodeRequest(old)).toThrow(
      expect.objectContaining({ code: "unsupported_version", details: expect.objectContaining({ min: 4 }) }),
    );
  });

  it("holds a push's symlink to the target rule, and reads an answer's as it comes", () => {
    // An older server stored such targets; a host refuses that one path, not the page that carries it.
    const link = { kind: "symlink", path: "l", target: "t".repeat(4096) } as const;
    const page = { entries: [{ ...link, rev: 3 }], next: { rev: 3, path: null }, more: false, rev: 3 };
    expect(OPS.changes.decodeResponse(decodeCbor(encodeCbor(page)))).toEqual(page);
    let refused: unknown;
    try {
      throughWire("push", { ...REQUESTS.push, entries: [link] });
    } catch (e) {
      refused = e;
    }
    expect(refused).toMatchObject({ code: "bad_request", details: { field: "entries[0].target" } });
  });
});

describe("socket frames", () => {
  const nonce = new Uint8Array(MARK_BYTES).fill(9);

  for (const op of Object.keys(REQUESTS) as OpName[]) {
    it(`carries a ${op} request frame to the server's reader and the op's decoder unchanged`, () => {
      const frame = readHostFrame(decodeCbor(encodeRequestFrame(5, op, REQUESTS[op])));
      if (frame.kind !== "request") throw new Error(`read as ${frame.kind}`);
      expect({ id: frame.id, op: frame.op }).toEqual({ id: 5, op });
      expect(OPS[op].decodeRequest(frame.body)).toEqual(REQUESTS[op]);
    });
  }

  it("reads each server frame as its kind", () => {
    const read = (bytes: Uint8Array) => readServerFrame(decodeCbor(bytes));
    expect(read(encodeAnswerFrame(3, "has", RESPONSES.has))).toEqual({ kind: "answer", id: 3, body: RESPONSES.has });
    expect(read(encodePoke(12))).toEqual({ kind: "poke", rev: 12 });
    expect(read(encodeMark(nonce))).toEqual({ kind: "mark", nonce });
    const refused = read(encodeErrorFrame(null, new ProtocolError("rate_limited", "slow down", { limit: 8 })));
    expect(refused).toMatchObject({ kind: "error", id: null, error: { code: "rate_limited", details: { limit: 8 } } });
  });

  it("reads an ack as an ack, and a frame with both ack and op as a request", () => {
    expect(readHostFrame(decodeCbor(encodeAck(nonce)))).toEqual({ kind: "ack", nonce });
    expect(readHostFrame({ ack: nonce, id: 1, op: "has", body: {} })).toMatchObject({ kind: "request", id: 1 });
  });

  it("refuses a host frame that is neither, with its id when one can be read", () => {
    expect(() => readHostFrame({ id: 4, op: "nope" })).toThrow(expect.objectContaining({ code: "bad_request" }));
    expect(() => readHostFrame([1, 2])).toThrow(expect.objectContaining({ code: "bad_request" }));
  });

  it("ignores a server frame of a kind this host does not know", () => {
    expect(readServerFrame({ hint: "newer server" })).toBeNull();
    expect(readServerFrame({ mark: new Uint8Array(3) })).toBeNull();
  });
});

describe("error details", () => {
  const throughWire = (e: ProtocolError) => decodeWireError(decodeCbor(encodeCbor(e.toWire())));

  it("reads a push's cursor_mismatch back as the acked cursor", () => {
    const e = throughWire(new ProtocolError("cursor_mismatch", "start is not acked", { acked: { rev: 4, path: "x" } }));
    expect(ackedOf(e)).toEqual({ rev: 4, path: "x" });
    expect(missingOf(e)).toBeNull();
  });

  it("reads missing_objects back as the hashes", () => {
    const e = throughWire(new ProtocolError("missing_objects", "2 objects missing", { missing: [h1, h2] }));
    expect(missingOf(e)).toEqual([h1, h2]);
    expect(ackedOf(e)).toBeNull();
  });

  it("reads a conflict back as its conflicts", () => {
    const conflicts = [
      { path: "a", rev: 3 },
      { path: "a/b", rev: 4, under: "a" },
    ];
    expect(conflictsOf(throughWire(conflictError(conflicts)))).toEqual(conflicts);
  });

  it("tells a push's wrong start from another history", () => {
    const wrongStart = throughWire(new ProtocolError("cursor_mismatch", "m", { acked: { rev: 2, path: null } }));
    const otherHistory = throughWire(new ProtocolError("cursor_mismatch", "m", { epoch: id, rev: 9 }));
    expect([isOtherHistory(wrongStart), isOtherHistory(otherHistory)]).toEqual([false, true]);
  });

  it("reads a busy workspace's wait, and an expired token's time", () => {
    const busy = throughWire(new ProtocolError("rate_limited", "m", { limit: 1, retryAfterMs: 1000 }));
    expect([retryAfterOf(busy), retryAfterOf(throughWire(new ProtocolError("rate_limited", "m")))]).toEqual([
      1000,
      null,
    ]);
    expect(expiredAtOf(throughWire(new ProtocolError("unauthorized", "token expired", { exp: 17 })))).toBe(17);
    expect(serverTimeOf(throughWire(new ProtocolError("unauthorized", "token expired", { exp: 17, now: 19 })))).toBe(
      19,
    );
  });

  it("keeps an unknown code from a newer server as internal with its message", () => {
    const e = decodeWireError({ error: { code: "brand_new", message: "later" } });
    expect(e).toMatchObject({ code: "internal", message: "later" });
  });

  it("is null for an answer", () => {
    expect(decodeWireError({ have: new Uint8Array() })).toBeNull();
  });
});

describe("codeOfStatus", () => {
  it("maps each status ferry answers with back to a code that has it", () => {
    // 422 names one of two refusals (hash_mismatch, missing_objects); ferry never sends it without the body.
    const statuses = new Set(Object.values(ERROR_STATUS).filter((s) => s !== 422));
    for (const status of statuses) expect(ERROR_STATUS[codeOfStatus(status)]).toBe(status);
    expect(codeOfStatus(422)).toBe("bad_request");
  });

  it("reads other statuses by class", () => {
    expect(codeOfStatus(418)).toBe("bad_request");
    expect(codeOfStatus(502)).toBe("unavailable");
    expect(codeOfStatus(504)).toBe("unavailable");
  });
});
