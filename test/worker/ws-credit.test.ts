/**
 * A socket whose host does not read its answers cannot make the object
 * buffer them without bound: past the unacknowledged bound its requests are
 * refused, and past a little more it is closed (PROTOCOL.md §8.2). A host
 * that replies to marks is served without limit. Every socket's unread
 * answers together take at most a share of the process's budget; a request
 * waits for its own socket's answers to be read, but for other sockets'
 * only briefly, and is then refused saying so (`heldByOthers`).
 */
import { describe, expect, it } from "vitest";
import { ACK_TIMEOUT_MS } from "../../protocol/flow.ts";
import { joinHashes, toHex } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { CLOSE_UNREAD } from "../../protocol/ws.ts";
import { MAX_CREDIT_REFUSALS } from "../../worker/do/answer-credit.ts";
import { MAX_PROCESS_ANSWER_BYTES, OTHERS_WAIT_MS, SOCKET_GET_BYTES } from "../../worker/do/answer-share.ts";
import { MAX_WAIT_MS } from "../../worker/do/inflight.ts";
import { blob } from "./helpers.ts";
import { freshName, openSocket, type TestSocket } from "./ws-client.ts";

/** Twelve 1 MiB objects stored, and a getObjects body asking for all of them (answers of ~8 MiB). */
async function storeObjects(s: TestSocket): Promise<Record<string, unknown>> {
  const objects: ObjectBlob[] = [];
  for (let i = 0; i < 12; i++) objects.push(await blob(`${i}:`.padEnd(LIMITS.maxObjectBytes, String(i % 10))));
  await s.ok("putObjects", { objects: objects.slice(0, 6) });
  await s.ok("putObjects", { objects: objects.slice(6) });
  return { hashes: joinHashes(objects.map((o) => o.hash)), maxBytes: LIMITS.maxGetBytes };
}

describe("objects/get over a socket", () => {
  it("answers at most SOCKET_GET_BYTES, and the rest when asked again", async () => {
    const s = await openSocket(freshName(), "rw");
    const get = await storeObjects(s);
    const first = (await s.request("getObjects", get)).body as { objects: ObjectBlob[]; missing: Uint8Array[] };
    const bytes = first.objects.reduce((n, o) => n + o.bytes.byteLength, 0);
    expect(first.objects.length).toBeGreaterThan(0);
    expect(bytes, "an answer over the socket").toBeLessThanOrEqual(SOCKET_GET_BYTES);
    expect(first.missing).toEqual([]);
    const all = Array.from({ length: 12 }, (_, i) => (get.hashes as Uint8Array).subarray(i * 32, (i + 1) * 32));
    const got = new Set(first.objects.map((o) => toHex(o.hash)));
    for (let i = 0; i < 12 && got.size < 12; i++) {
      const rest = all.filter((h) => !got.has(toHex(h)));
      const next = (await s.request("getObjects", { hashes: joinHashes(rest) })).body as { objects: ObjectBlob[] };
      for (const o of next.objects) got.add(toHex(o.hash));
    }
    expect(got.size).toBe(12);
  });
});

describe("answer bytes a socket has not acknowledged", () => {
  it("stay under the process's share for a socket that never replies to marks, which is then closed", async () => {
    const s = await openSocket(freshName(), "rw");
    const get = await storeObjects(s);
    s.ackMarks = false;
    const first = await s.request("getObjects", get);
    const bytes = ((first.body?.objects ?? []) as ObjectBlob[]).reduce((n, o) => n + o.bytes.byteLength, 0);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(MAX_PROCESS_ANSWER_BYTES);
    // The share is full of its own unread answer: the next waits for its ack (MAX_WAIT_MS), then is refused.
    const started = Date.now();
    const refused = (await s.request("getObjects", get)).error;
    expect(refused).toMatchObject({ code: "rate_limited", limit: MAX_PROCESS_ANSWER_BYTES, retryAfterMs: 1000 });
    expect(refused?.heldByOthers).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(MAX_WAIT_MS - 50);
    expect(s.marks.length).toBe(1);
    // A socket that keeps sending and never reads is closed (its refusals, or its mark's timeout).
    for (let i = 0; i <= MAX_CREDIT_REFUSALS && !s.closed; i++) {
      s.send("getObjects", get);
      if (i % 200 === 0) await new Promise((r) => setTimeout(r, 0));
    }
    expect((await s.waitClosed(ACK_TIMEOUT_MS + 10_000)).code).toBe(CLOSE_UNREAD);
  }, 60_000);

  it("are forgotten when the host replies to a mark, so it is served again", async () => {
    const s = await openSocket(freshName(), "rw");
    const get = await storeObjects(s);
    s.ackMarks = false;
    let refused = false;
    for (let i = 0; i < 6 && !refused; i++) refused = (await s.request("getObjects", get)).error !== undefined;
    expect(refused).toBe(true);
    s.ackMarks = true;
    s.ack(s.marks[0] as Uint8Array);
    // From now on the test client answers every mark as it comes.
    for (let i = 0; i < 10; i++) expect((await s.request("getObjects", get)).body).toBeDefined();
    expect(s.marks.length).toBeGreaterThanOrEqual(10);
  });

  it("leave room for a reading host's next objects/get, however many small ones came first", async () => {
    const s = await openSocket(freshName(), "rw");
    const get = await storeObjects(s);
    // Probes of 100,000 hashes: answers of ~100 KB each, 1.2 MB together, each under the 4 MiB after
    // which a mark always follows (MARK_AFTER_BYTES). Past the share's room for small answers they are
    // marked, so the host's ack gives their room back.
    for (let i = 0; i < 12; i++) expect((await s.request("has", { hashes: randomHashes(100_000) })).body).toBeDefined();
    const started = Date.now();
    const next = await s.request("getObjects", get);
    expect(next.error, JSON.stringify(next.error)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(MAX_WAIT_MS);
    s.close();
  });

  it("stay under the process's share over every socket: another socket's request waits for a reader's ack", async () => {
    const [one, two] = [await openSocket(freshName(), "rw"), await openSocket(freshName(), "rw")];
    const gets = [await storeObjects(one), await storeObjects(two)];
    one.ackMarks = false;
    try {
      // One answer of ~8 MiB, unread: the share holds one.
      expect((await one.request("getObjects", gets[0])).body).toBeDefined();
      // The other socket, far under its own bound (MAX_UNACKED_BYTES), waits for room; the first reads what
      // it was sent meanwhile, well within OTHERS_WAIT_MS: the waiting request is served, not refused.
      const waiting = two.request("getObjects", gets[1]);
      await sleep(0);
      one.ack(one.marks[0] as Uint8Array);
      const served = await waiting;
      expect(served.error, JSON.stringify(served.error)).toBeUndefined();
      expect(served.body).toBeDefined();
    } finally {
      one.close();
      two.close();
    }
  });

  it("held by sockets that do not read refuse another socket's request soon, saying others hold them", async () => {
    // The same objects in two workspaces; the one that never reads holds a read-only token: the share is the process's.
    const held = freshName();
    const writer = await openSocket(held, "rw");
    await storeObjects(writer);
    writer.close();
    const [one, two] = [await openSocket(held, "r"), await openSocket(freshName(), "rw")];
    const get = await storeObjects(two);
    one.ackMarks = false;
    try {
      expect((await one.request("getObjects", get)).body).toBeDefined();
      // Not MAX_WAIT_MS as for its own answers: it would wait on a host that may never read, and
      // over HTTP, where answers stream with backpressure, it is not held at all (PROTOCOL.md §8.2).
      const started = Date.now();
      expect((await two.request("getObjects", get)).error).toMatchObject({
        code: "rate_limited",
        limit: MAX_PROCESS_ANSWER_BYTES,
        retryAfterMs: 1000,
        heldByOthers: true,
      });
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(OTHERS_WAIT_MS - 50);
      expect(waited).toBeLessThan(MAX_WAIT_MS);
      // Small answers still fit beside the held one: the socket is not closed, only that request refused.
      expect((await two.request("has", { hashes: new Uint8Array(0) })).body).toBeDefined();
    } finally {
      one.close();
      two.close();
    }
  });
});

/** `count` random hashes as one hash list, filled 64 KiB at a time (getRandomValues' most). */
function randomHashes(count: number): Uint8Array {
  const out = new Uint8Array(32 * count);
  for (let at = 0; at < out.byteLength; at += 65_536) crypto.getRandomValues(out.subarray(at, at + 65_536));
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
