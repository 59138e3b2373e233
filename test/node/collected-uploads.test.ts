/**
 * A collection that runs between a host's uploads and its push (PROTOCOL.md
 * §7.9, §9.2): with no upload grace it deletes the objects nothing names
 * yet, the push is refused `missing_objects`, and the host uploads them
 * again and pushes: the sync completes and nothing is lost, even for
 * chunks this sync had already uploaded once (the early upload's), and
 * when the refusal names only the first 1,024 of them (§4.5 rule 5).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Transport, TransportFactory } from "../../client/transport/transport.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";
import { collectNow, serverWithVars } from "./support/vars-server.ts";

afterEach(cleanup);

const server = serverWithVars({ FERRY_UPLOAD_GRACE: "0", FERRY_HISTORY: "0" });

/** `count` files of `size` bytes: more than the early upload's first batch, so they are uploaded while the scan runs. */
function tree(count: number, size: number): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  for (let i = 0; i < count; i++) files[`data/file${i}.bin`] = pseudoRandom(size, 7000 + i);
  return files;
}

/** `factory`'s transport, with a collection run just before the first push: it takes every upload nothing names yet. */
function collectingBeforeFirstPush(factory: TransportFactory, ws: string) {
  const freed: number[] = [];
  let pushes = 0;
  const wrapped: TransportFactory = (endpoint) => {
    const inner = factory(endpoint);
    const transport: Transport = {
      call: async (op, req) => {
        if (op === "push" && pushes++ === 0) {
          // Past the upload times (the grace is 0).
          await new Promise((r) => setTimeout(r, 20));
          freed.push((await collectNow(server.url, ws)).freed.objects);
        }
        return inner.call(op, req);
      },
      listen: (events) => inner.listen(events),
      close: () => inner.close(),
    };
    return transport;
  };
  return { factory: wrapped, freed, pushes: () => pushes };
}

describe.each(TRANSPORTS)("a push whose uploads were collected, over $name", ({ factory }) => {
  it.each([
    {
      files: 16,
      size: 200 * 1024,
      what: "uploads them again and completes, chunks this sync uploaded before included",
    },
    { files: 1100, size: 3000, what: "uploads all of them when the refusal names only the first 1,024" },
  ])("$what", async ({ files, size }) => {
    const ws = newWorkspace();
    const collecting = collectingBeforeFirstPush(factory, ws);
    const a = openHost(ws, { storeKind: "disk", url: server.url, factory: collecting.factory });
    writeTree(a.root, tree(files, size));
    const report = await a.engine.sync();
    // The race happened: the collection freed the uploads, and the first push was refused for them.
    expect(collecting.freed[0]).toBeGreaterThanOrEqual(files);
    expect(collecting.pushes()).toBe(2);
    expect(report.entriesSent).toBeGreaterThanOrEqual(files);

    const b = openHost(ws, { storeKind: "disk", url: server.url, factory });
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root));
  });
});
