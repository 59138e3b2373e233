/**
 * A host fills a push pack to the server's maxBodyItems as well as to its
 * bytes (client/engine/push.ts, PROTOCOL.md §2.2): the server refuses a body
 * of more CBOR items before decoding it, so a pack past it would fail at
 * every sync.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Transport, TransportFactory } from "../../client/transport/transport.ts";
import { weighCbor } from "../../protocol/cbor-weight.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { encodeRequest, type OpResponse } from "../../protocol/ops.ts";
import type { PushRequest } from "../../protocol/push.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const http = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;

/** HTTP, with hello's answer advertising `maxBodyItems`, and every push request kept. */
function advertisingMaxBodyItems(max: number, pushes: PushRequest[]): TransportFactory {
  return (endpoint) => {
    const inner = http(endpoint);
    const transport: Transport = {
      call: async (op, req) => {
        if (op === "push") pushes.push(req as PushRequest);
        const res = await inner.call(op, req);
        if (op !== "hello") return res;
        const hello = res as OpResponse<"hello">;
        return { ...hello, limits: { ...hello.limits, maxBodyItems: max } } as typeof res;
      },
      listen: (events) => inner.listen(events),
      close: () => inner.close(),
    };
    return transport;
  };
}

describe("a push pack", () => {
  it("holds no more CBOR items than the server's maxBodyItems", async () => {
    const ws = newWorkspace();
    const pushes: PushRequest[] = [];
    // Room for the envelope and maxObjects inline objects, and 40 items of entries: two small files a pack.
    const max = 64 + 5 * LIMITS.maxObjects + 1 + 40;
    const a = openHost(ws, { storeKind: "disk", factory: advertisingMaxBodyItems(max, pushes) });
    writeTree(a.root, { "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "d.txt": "d\n", "e.txt": "e\n" });
    await a.engine.sync();
    expect(pushes.map((p) => p.entries.length)).toEqual([2, 2, 1]);
    for (const p of pushes) expect(weighCbor(encodeRequest("push", p), max).items).toBeLessThanOrEqual(max);

    const b = openHost(ws, { storeKind: "memory", factory: http });
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root));
  });
});
