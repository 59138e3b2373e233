import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { joinHashes } from "../../protocol/hash.ts";
import { LIMITS, MiB } from "../../protocol/limits.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { MAX_INFLIGHT_BYTES } from "../../worker/do/socket.ts";
import { newSocketState } from "../../worker/do/socket-state.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { blob, helloRequest, randomId } from "./helpers.ts";
import { freshName, openSocket, stubOf } from "./ws-client.ts";

type Answer = { id: number | null; body?: Record<string, unknown>; error?: { code: string } };

/**
 * A socket as the hibernation API hands it to the object, so a test can
 * deliver frames faster than the object answers them: the runtime does this
 * when a host sends without waiting, and a test over a real socket cannot
 * time it.
 */
class DeliveredSocket {
  private attachment: unknown = structuredClone(newSocketState("rw", Math.floor(Date.now() / 1000) + 600));
  readonly answers: Answer[] = [];
  serializeAttachment(value: unknown): void {
    this.attachment = structuredClone(value);
  }
  deserializeAttachment(): unknown {
    return structuredClone(this.attachment);
  }
  send(data: Uint8Array): void {
    this.answers.push(decodeCbor(data) as Answer);
  }
  close(): void {}
}

function frame(id: number, op: string, body: unknown): ArrayBuffer {
  const bytes = encodeCbor({ id, op, body });
  return bytes.slice().buffer;
}

/** Delivers every frame at once (none waits for an answer) and returns the answers in the order they were sent. */
async function deliverAll(name: string, frames: ArrayBuffer[]): Promise<Answer[]> {
  return runInDurableObject(stubOf(name), async (instance: WorkspaceObject) => {
    const socket = new DeliveredSocket();
    const ws = socket as unknown as WebSocket;
    await Promise.all(frames.map((f) => instance.webSocketMessage(ws, f)));
    return socket.answers;
  });
}

describe("flow control", () => {
  it("answers rate_limited at once to requests beyond maxInflight, without running them", async () => {
    const name = freshName("flow");
    const count = LIMITS.maxInflight + 12;
    const objects: ObjectBlob[] = await Promise.all(Array.from({ length: count }, (_, i) => blob(`object ${i}\n`)));
    const answers = await deliverAll(
      name,
      objects.map((o, i) => frame(i + 1, "putObjects", { objects: [o] })),
    );
    expect(answers).toHaveLength(count);
    const limited = answers.filter((a) => a.error?.code === "rate_limited").map((a) => a.id);
    const served = answers.filter((a) => a.body).map((a) => a.id);
    expect(served.sort((x, y) => (x as number) - (y as number))).toEqual(
      Array.from({ length: LIMITS.maxInflight }, (_, i) => i + 1),
    );
    expect(limited).toHaveLength(count - LIMITS.maxInflight);
    // Refusals went out before the requests in the window were answered: out of order, matched by id.
    expect(answers.slice(0, limited.length).every((a) => a.error?.code === "rate_limited")).toBe(true);
    // Nothing of a refused request was stored.
    const s = await openSocket(name);
    const have = (await s.ok("has", { hashes: joinHashes(objects.map((o) => o.hash)) })).have as Uint8Array;
    expect([...have]).toEqual(objects.map((_, i) => (i < LIMITS.maxInflight ? 1 : 0)));
  });

  it(`bounds the bytes in flight to ${MAX_INFLIGHT_BYTES / MiB} MiB even when fewer requests are`, async () => {
    const name = freshName("flow");
    // Three frames of 6 MiB: the third would take the socket past the byte window.
    const frames = await Promise.all(
      [0, 1, 2].map(async (f) => {
        const objects = await Promise.all(
          Array.from({ length: 6 }, (_, i) => blob(`${f}-${i}-`.padEnd(MiB - 64, "x"))),
        );
        return frame(f + 1, "putObjects", { objects });
      }),
    );
    for (const f of frames) expect(f.byteLength).toBeGreaterThan(MAX_INFLIGHT_BYTES / 3);
    const answers = await deliverAll(name, frames);
    const byId = new Map(answers.map((a) => [a.id, a]));
    expect(byId.get(1)?.body?.stored).toBe(6);
    expect(byId.get(2)?.body?.stored).toBe(6);
    expect(byId.get(3)?.error?.code).toBe("rate_limited");
  });

  it("serves a flood over a real socket without dropping it: every request is answered", async () => {
    const s = await openSocket(freshName("flow"));
    const ids = Array.from({ length: 100 }, () => s.send("hello", helloRequest(randomId())));
    const answers = await Promise.all(ids.map((id) => s.answer(id)));
    expect(answers.every((a) => a.body !== undefined || a.error?.code === "rate_limited")).toBe(true);
    expect(s.closed).toBeNull();
  });
});
