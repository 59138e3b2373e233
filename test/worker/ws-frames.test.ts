import { describe, expect, it } from "vitest";
import { encodeCbor } from "../../protocol/cbor.ts";
import { joinHashes } from "../../protocol/hash.ts";
import { decodeHelloResponse } from "../../protocol/hello.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { CLOSE_POLICY, MAX_BAD_FRAMES } from "../../protocol/ws.ts";
import { helloRequest, randomId, smallFile } from "./helpers.ts";
import { freshName, openSocket } from "./ws-client.ts";

const MALFORMED = new Uint8Array([0xa2, 0x62, 0x69]); // a map cut short

describe("sync socket frames", () => {
  it("answers hello with the HTTP body under the request's id", async () => {
    const s = await openSocket(freshName());
    const a = await s.request("hello", helloRequest(randomId()));
    expect(a.error).toBeUndefined();
    const hello = decodeHelloResponse(a.body);
    expect(hello.rev).toBe(0);
    expect(hello.limits).toEqual(LIMITS);
    expect(hello.capabilities).toContain("pokes");
  });

  it("matches answers to requests by id, whatever ids the host picks", async () => {
    const s = await openSocket(freshName());
    const host = randomId();
    const file = await smallFile("a.txt", "a\n");
    const ids = [907, 3, 41];
    s.send("hello", helloRequest(host), ids[0]);
    s.send("putObjects", { objects: [file.object] }, ids[1]);
    s.send("has", { hashes: joinHashes([file.object.hash, new Uint8Array(32)]) }, ids[2]);
    const [hello, put, has] = await Promise.all(ids.map((id) => s.answer(id)));
    expect(hello?.body?.epoch).toBeInstanceOf(Uint8Array);
    expect(put?.body).toEqual({ stored: 1, present: 0 });
    expect(has?.body).toEqual({ have: new Uint8Array([1, 0]) });
  });

  it("refuses a malformed frame with an error under id null and stays usable", async () => {
    const s = await openSocket(freshName());
    s.sendRaw(MALFORMED);
    const bad = await s.answer(null);
    expect(bad.error?.code).toBe("bad_request");
    expect((await s.request("hello", helloRequest(randomId()))).body?.rev).toBe(0);
  });

  it("refuses a text frame like a malformed one", async () => {
    const s = await openSocket(freshName());
    s.sendRaw(JSON.stringify({ id: 1, op: "hello", body: {} }));
    expect((await s.answer(null)).error?.code).toBe("bad_request");
    expect((await s.request("hello", helloRequest(randomId()))).body?.rev).toBe(0);
  });

  it("refuses a frame over maxBodyBytes with payload_too_large and stays usable", async () => {
    const s = await openSocket(freshName());
    s.sendRaw(new Uint8Array(LIMITS.maxBodyBytes + 1));
    const big = await s.answer(null, 20_000);
    expect(big.error?.code).toBe("payload_too_large");
    expect(big.error?.limit).toBe(LIMITS.maxBodyBytes);
    expect((await s.request("hello", helloRequest(randomId()))).body?.rev).toBe(0);
  });

  it("refuses a frame of more CBOR items than maxBodyItems under its id, before decoding it", async () => {
    const s = await openSocket(freshName());
    // 220,000 32-byte byte strings in 7.5 MB, under maxBodyBytes: a Uint8Array each once decoded.
    const chunks = Array(55_000).fill(new Uint8Array(32).fill(1));
    const entries = Array.from({ length: 4 }, (_, i) => ({
      path: `f${i}`,
      kind: "file",
      mode: 0o644,
      mtime: 0,
      size: 1,
      chunks,
    }));
    const id = s.send("push", {
      hostId: randomId(),
      start: { rev: 0, path: null },
      end: { rev: 1, path: null },
      entries,
    });
    const refused = await s.answer(id, 20_000);
    expect(refused.error).toMatchObject({ code: "payload_too_large", field: "body", limit: LIMITS.maxBodyItems });
    expect((await s.request("hello", helloRequest(randomId()))).body?.rev).toBe(0);
  });

  it("answers an envelope without an operation under its id", async () => {
    const s = await openSocket(freshName());
    s.sendRaw(encodeCbor({ id: 12, op: "drop-tables", body: {} }));
    const a = await s.answer(12);
    expect(a.error?.code).toBe("bad_request");
    expect(a.error?.field).toBe("op");
  });

  it("refuses a bad body with the operation's own error, as HTTP does", async () => {
    const s = await openSocket(freshName());
    const badPath = await s.request("push", {
      hostId: randomId(),
      start: { rev: 0, path: null },
      end: { rev: 1, path: null },
      entries: [{ path: "../escape", kind: "gone" }],
    });
    expect(badPath.error?.code).toBe("invalid_path");
    const wrongStart = await s.request("push", {
      hostId: randomId(),
      start: { rev: 5, path: null },
      end: { rev: 6, path: null },
      entries: [],
    });
    expect(wrongStart.error?.code).toBe("cursor_mismatch");
    expect(wrongStart.error?.acked).toEqual({ rev: 0, path: null });
  });

  it(`closes with ${CLOSE_POLICY} after ${MAX_BAD_FRAMES} unreadable frames in a row, not before`, async () => {
    const s = await openSocket(freshName());
    for (let i = 0; i < MAX_BAD_FRAMES - 1; i++) s.sendRaw(MALFORMED);
    // A readable frame resets the count.
    expect((await s.request("hello", helloRequest(randomId()))).body).toBeDefined();
    expect(s.answers.get(null)?.length).toBe(MAX_BAD_FRAMES - 1);
    for (let i = 0; i < MAX_BAD_FRAMES; i++) s.sendRaw(MALFORMED);
    const closed = await s.waitClosed();
    expect(closed.code).toBe(CLOSE_POLICY);
    expect(closed.reason).toMatch(/unreadable/);
  });
});
