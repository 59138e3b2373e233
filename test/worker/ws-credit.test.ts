/**
 * A socket whose host does not read its answers cannot make the object
 * buffer them without bound: past the unacknowledged bound its requests are
 * refused, and past a little more it is closed (PROTOCOL.md §8.2). A host
 * that replies to marks is served without limit. Every socket's unread
 * answers together take at most a share of the process's budget.
 */
import { describe, expect, it } from "vitest";
import { MAX_UNACKED_BYTES } from "../../protocol/flow.ts";
import { joinHashes } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { CLOSE_POLICY } from "../../protocol/ws.ts";
import { MAX_CREDIT_REFUSALS, MAX_PROCESS_ANSWER_BYTES } from "../../worker/do/answer-credit.ts";
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
  it("stay under the bound for a socket that never replies to marks, which is then closed", async () => {
    const s = await openSocket(freshName(), "rw");
    const get = await storeObjects(s);
    s.ackMarks = false;
    let served = 0;
    let bytes = 0;
    for (let i = 0; i < 8; i++) {
      const a = await s.request("getObjects", get);
      if (a.error) {
        expect(a.error).toMatchObject({ code: "rate_limited", limit: MAX_UNACKED_BYTES });
        continue;
      }
      served++;
      bytes += ((a.body?.objects ?? []) as ObjectBlob[]).reduce((n, o) => n + o.bytes.byteLength, 0);
    }
    expect(served).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(MAX_UNACKED_BYTES);
    expect(s.marks.length).toBe(1);
    // Refusals count too: a socket that keeps sending and never reads is closed.
    for (let i = 0; i <= MAX_CREDIT_REFUSALS && !s.closed; i++) {
      s.send("getObjects", get);
      if (i % 200 === 0) await new Promise((r) => setTimeout(r, 0));
    }
    // A thousand refusals take the object ~10 s on a machine at load 20 (one pass did time out at 10 s).
    expect((await s.waitClosed(40_000)).code).toBe(CLOSE_POLICY);
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
    await s.until(() => s.marks.length >= 2);
    // The next mark comes at once (more is still unacknowledged), and is answered by the test client.
    for (let i = 0; i < 10; i++) expect((await s.request("getObjects", get)).body).toBeDefined();
  });

  it("stay under the process's share over every socket, and come back as a socket reads", async () => {
    const [one, two] = [await openSocket(freshName(), "rw"), await openSocket(freshName(), "rw")];
    const gets = [await storeObjects(one), await storeObjects(two)];
    one.ackMarks = false;
    two.ackMarks = false;
    try {
      // Two answers of ~8 MiB on one socket, one on the other: the share holds three.
      for (const [s, get] of [
        [one, gets[0]],
        [one, gets[0]],
        [two, gets[1]],
      ] as const) {
        expect((await s.request("getObjects", get)).body).toBeDefined();
      }
      // Each socket is far under its own bound (MAX_UNACKED_BYTES), and both are refused by the process's share.
      for (const [s, get] of [
        [one, gets[0]],
        [two, gets[1]],
      ] as const) {
        expect((await s.request("getObjects", get)).error).toMatchObject({
          code: "rate_limited",
          limit: MAX_PROCESS_ANSWER_BYTES,
          retryAfterMs: 1000,
        });
      }
      // The first reads what it was sent: the other socket is served again.
      one.ack(one.marks[0] as Uint8Array);
      await one.until(() => one.marks.length >= 2);
      expect((await two.request("getObjects", gets[1])).body).toBeDefined();
    } finally {
      one.close();
      two.close();
    }
  });
});
