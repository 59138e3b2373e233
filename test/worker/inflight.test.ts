/**
 * The object holds a bounded number of request bytes at once, over every
 * HTTP body being read: past the bound a request is answered 429
 * `rate_limited` with a retry hint, before its body is read (inflight.ts).
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { MAX_OBJECT_INFLIGHT_BYTES } from "../../worker/do/inflight.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { freshWorkspace } from "./helpers.ts";

/** A body the test writes when it likes: the call holds its reservation until then. */
function slowBody(): { readable: ReadableStream<Uint8Array>; finish: () => Promise<void> } {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  return {
    readable,
    finish: async () => {
      await writer.write(encodeCbor({ hashes: new Uint8Array(0) }));
      await writer.close();
    },
  };
}

describe("request bytes in flight in one object", () => {
  it("answers rate_limited with a retry hint past the bound, and serves again once bodies are read", async () => {
    const ws = freshWorkspace();
    const full = MAX_OBJECT_INFLIGHT_BYTES / LIMITS.maxBodyBytes;
    const held = Array.from({ length: full }, () => slowBody());
    const calls = held.map((b) => ws.serve("has", b.readable, "rw", LIMITS.maxBodyBytes));
    // Calls reach the object in order: these are refused while the others wait for their bodies.
    for (let i = 0; i < 3; i++) {
      const extra = slowBody();
      const res = await ws.serve("has", extra.readable, "rw", LIMITS.maxBodyBytes);
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("1");
      expect((decodeCbor(new Uint8Array(await res.arrayBuffer())) as { error: unknown }).error).toMatchObject({
        code: "rate_limited",
        limit: MAX_OBJECT_INFLIGHT_BYTES,
        retryAfterMs: 1000,
      });
    }
    // Even a small body waits while the bound is full.
    const small = await ws.serve("has", encodeCbor({ hashes: new Uint8Array(0) }));
    expect(small.status).toBe(429);
    for (const b of held) await b.finish();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual(Array(full).fill(200));
    expect((await ws.serve("has", encodeCbor({ hashes: new Uint8Array(0) }))).status).toBe(200);
    const peak = await runInDurableObject(ws, (o: WorkspaceObject) => o.inflight.peak);
    expect(peak).toBeLessThanOrEqual(MAX_OBJECT_INFLIGHT_BYTES);
  });

  it("admits one request of any allowed size when nothing else is in flight", async () => {
    const ws = freshWorkspace();
    const res = await ws.serve("has", encodeCbor({ hashes: new Uint8Array(32 * 1000) }), "rw");
    expect(res.status).toBe(200);
  });
});
