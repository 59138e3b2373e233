import { afterEach, describe, expect, it } from "vitest";
import { sha256Sync } from "../../client/content/hash.ts";
import { EngineContext } from "../../client/engine/context.ts";
import { EarlyUpload } from "../../client/engine/early-upload.ts";
import { sayHello } from "../../client/engine/hello.ts";
import { emptyReport, SILENT } from "../../client/engine/report.ts";
import { IgnoreRules } from "../../client/scan/ignore-rules.ts";
import { Scanner } from "../../client/scan/scanner.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { Transport } from "../../client/transport/transport.ts";
import { cleanup, endpointFor, newWorkspace, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { pseudoRandom } from "./support/tree.ts";

afterEach(cleanup);

const KiB = 1024;

/** An engine context against a real server whose `objects` calls are counted, answered ones too, after hello. */
async function uploadingContext(factory: (typeof TRANSPORTS)[number]["factory"]) {
  const root = tempDir();
  const inner = factory(endpointFor(newWorkspace()));
  const sent: number[] = [];
  let answered = 0;
  const transport: Transport = {
    call: async (op, req) => {
      if (op !== "putObjects") return inner.call(op, req);
      const objects = (req as { objects: { bytes: Uint8Array }[] }).objects;
      sent.push(objects.reduce((n, o) => n + o.bytes.byteLength, 0));
      const res = await inner.call(op, req);
      answered++;
      return res;
    },
    listen: (events) => inner.listen(events),
    close: () => inner.close(),
  };
  const store = openStore("memory", root);
  const ignore = new IgnoreRules([]);
  const ctx = new EngineContext(
    root,
    store,
    transport,
    ignore,
    new Scanner(root, store, ignore),
    emptyReport(),
    SILENT,
  );
  await sayHello(ctx);
  return {
    ctx,
    sent,
    answered: () => answered,
    close: async () => {
      await transport.close();
      store.close();
    },
  };
}

/** Hands `count` new chunks of 256 KiB to the early upload, as the scan does. */
function addChunks(early: EarlyUpload, count: number, seed: number): void {
  for (let i = 0; i < count; i++) {
    const bytes = pseudoRandom(256 * KiB, seed + i);
    early.add(sha256Sync(bytes), bytes);
  }
}

describe.each(TRANSPORTS)("the early upload's batches over $name", ({ factory }) => {
  it("sends a batch of the first batch's size while nothing is in flight, without waiting for a full one", async () => {
    const host = await uploadingContext(factory);
    const early = new EarlyUpload(host.ctx);
    // 2 MiB (and the chunks' overhead): the first batch goes at once; the next full batch would be 4 MiB.
    addChunks(early, 8, 100);
    expect(host.sent).toHaveLength(1);
    while (host.answered() < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setImmediate(resolve));
    // Nothing in flight: the object is idle, so 2 MiB go now rather than after 4 MiB.
    addChunks(early, 8, 200);
    expect(host.sent).toHaveLength(2);
    expect(host.sent[1]).toBeLessThan(4096 * KiB);
    // While that batch is in flight, the rest waits for a full batch (8 MiB by now) or the scan's end.
    addChunks(early, 8, 300);
    expect(host.sent).toHaveLength(2);
    await early.finish();
    expect(host.sent).toHaveLength(3);
    expect(host.sent.reduce((n, b) => n + b, 0)).toBe(24 * 256 * KiB);
    expect(host.ctx.report.objectBytesSent).toBe(24 * 256 * KiB);
    await host.close();
  });
});
