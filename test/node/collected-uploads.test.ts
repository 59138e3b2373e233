/**
 * A collection that runs between a host's uploads and its push (PROTOCOL.md
 * §7.9, §9.2): with no upload grace it deletes the objects nothing names
 * yet, the push is refused `missing_objects`, and the host uploads them
 * again and pushes: the sync completes and nothing is lost, even for
 * chunks this sync had already uploaded once (the early upload's).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Transport } from "../../client/transport/transport.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";
import { collectNow, serverWithVars } from "./support/vars-server.ts";

afterEach(cleanup);

const server = serverWithVars({ FERRY_UPLOAD_GRACE: "0", FERRY_HISTORY: "0" });

/** 16 files of 200 KiB: more than the early upload's first batch, so they are uploaded while the scan runs. */
function tree(): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  for (let i = 0; i < 16; i++) files[`data/file${i}.bin`] = pseudoRandom(200 * 1024, 7000 + i);
  return files;
}

describe.each(TRANSPORTS)("a push whose uploads were collected, over $name", ({ factory }) => {
  it("uploads them again and completes, chunks this sync uploaded before included", async () => {
    const ws = newWorkspace();
    const freed: number[] = [];
    let pushes = 0;
    const a = openHost(ws, {
      storeKind: "disk",
      url: server.url,
      factory: (endpoint) => {
        const inner = factory(endpoint);
        const transport: Transport = {
          call: async (op, req) => {
            if (op === "push" && pushes++ === 0) {
              // Past the upload times (the grace is 0): the collection takes every upload nothing names yet.
              await new Promise((r) => setTimeout(r, 20));
              freed.push((await collectNow(server.url, ws)).freed.objects);
            }
            return inner.call(op, req);
          },
          listen: (events) => inner.listen(events),
          close: () => inner.close(),
        };
        return transport;
      },
    });
    writeTree(a.root, tree());
    const report = await a.engine.sync();
    // The race happened: the collection freed the uploads, and the first push was refused for them.
    expect(freed[0]).toBeGreaterThanOrEqual(16);
    expect(pushes).toBe(2);
    expect(report.entriesSent).toBeGreaterThanOrEqual(16);

    const b = openHost(ws, { storeKind: "disk", url: server.url, factory });
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root));
  });
});
