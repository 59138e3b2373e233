/**
 * A socket whose host does not read its answers cannot make the object
 * buffer them without bound: past the unacknowledged bound its requests are
 * refused, and past a little more it is closed (PROTOCOL.md §8.2). A host
 * that replies to marks is served without limit. Every socket's unread
 * answers together take at most a share of the process's budget.
 */
import { describe, expect, it } from "vitest";
import { joinHashes } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { CLOSE_POLICY } from "../../protocol/ws.ts";
import { ACK_TIMEOUT_MS, MAX_CREDIT_REFUSALS, MAX_PROCESS_ANSWER_BYTES } from "../../worker/do/answer-credit.ts";
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

describe("answer bytes a socket has not acknowledged", () => {
  it("stay under the process's share for a socket that never replies to marks, which is then closed", async () => {
    const s = await openSocket(freshName(), "rw");
    const get = await storeObjects(s);
    s.ackMarks = false;
    const first = await s.request("getObjects", get);
    const bytes = ((first.body?.objects ?? []) as ObjectBlob[]).reduce((n, o) => n + o.bytes.byteLength, 0);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(MAX_PROCESS_ANSWER_BYTES);
    // The share is full of its unread answer: the next waits for room (MAX_WAIT_MS), then is refused.
    const started = Date.now();
    expect((await s.request("getObjects", get)).error).toMatchObject({
      code: "rate_limited",
      limit: MAX_PROCESS_ANSWER_BYTES,
      retryAfterMs: 1000,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(MAX_WAIT_MS - 50);
    expect(s.marks.length).toBe(1);
    // A socket that keeps sending and never reads is closed (its refusals, or its mark's timeout).
    for (let i = 0; i <= MAX_CREDIT_REFUSALS && !s.closed; i++) {
      s.send("getObjects", get);
      if (i % 200 === 0) await new Promise((r) => setTimeout(r, 0));
    }
    expect((await s.waitClosed(ACK_TIMEOUT_MS + 10_000)).code).toBe(CLOSE_POLICY);
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

  it("stay under the process's share over every socket, and a request waits for its room", async () => {
    const [one, two] = [await openSocket(freshName(), "rw"), await openSocket(freshName(), "rw")];
    const gets = [await storeObjects(one), await storeObjects(two)];
    one.ackMarks = false;
    two.ackMarks = false;
    try {
      // One answer of ~8 MiB, unread: the share holds one.
      expect((await one.request("getObjects", gets[0])).body).toBeDefined();
      // The other socket, far under its own bound (MAX_UNACKED_BYTES), waits for room rather than being refused.
      const waiting = two.request("getObjects", gets[1]);
      const early = await Promise.race([waiting.then(() => "answered"), sleep(500).then(() => "waiting")]);
      expect(early).toBe("waiting");
      // The first reads what it was sent: the waiting request is served then.
      one.ack(one.marks[0] as Uint8Array);
      expect((await waiting).body).toBeDefined();
    } finally {
      one.close();
      two.close();
    }
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
