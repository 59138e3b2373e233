import { afterEach, describe, expect, it } from "vitest";
import { SyncEngine } from "../../client/engine/sync.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { HostStore } from "../../client/store/store.ts";
import { cleanup, endpointFor, interceptCalls, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const KiB = 1024;
/** How long an upload's answer is held at most for the push's read of its pack; the old order never read it meanwhile. */
const HOLD_MS = 3000;

/** 40 files of 200 KiB (7.8 MiB, one chunk each): three early batches, none of them waiting for room. */
function tree(seed: number): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  for (let i = 0; i < 40; i++) files[`pkg${i % 4}/file${i}.bin`] = pseudoRandom(200 * KiB, seed + i);
  return files;
}

describe.each(TRANSPORTS)("a first push over $name", ({ factory }) => {
  it("reads and cuts its pack while the last uploads are answered, and sends it after them", async () => {
    const ws = newWorkspace();
    const root = tempDir();
    writeTree(root, tree(31));
    const events: string[] = [];
    let packRead: () => void = () => {};
    const packReading = new Promise<void>((resolve) => {
      packRead = resolve;
    });
    // Every upload's answer reaches the engine only once the push has read its pack (or HOLD_MS passed).
    const transport = interceptCalls(factory, async (op, next) => {
      events.push(`${op} sent`);
      const res = await next();
      if (op === "putObjects") {
        await Promise.race([packReading, new Promise((resolve) => setTimeout(resolve, HOLD_MS))]);
        events.push("putObjects answered");
      }
      return res;
    })(endpointFor(ws));
    const inner = openStore("memory", root);
    const store = new Proxy(inner, {
      get(target, key) {
        if (key === "pending")
          return (...args: Parameters<HostStore["pending"]>) => {
            events.push("pack read");
            packRead();
            return target.pending(...args);
          };
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const report = await new SyncEngine({ root, store, transport }).sync();
    await transport.close();
    inner.close();

    const answers = events.flatMap((e, i) => (e === "putObjects answered" ? [i] : []));
    expect(answers.length).toBeGreaterThan(0);
    // The pack was read while an upload was unanswered ...
    expect(events.indexOf("pack read")).toBeLessThan(Math.max(...answers));
    // ... and pushed only once every upload was answered, carrying no bytes of its own.
    expect(events.indexOf("push sent")).toBeGreaterThan(Math.max(...answers));
    expect(report.objectBytesSent).toBe(40 * 200 * KiB);
    expect(report.entriesSent).toBe(44);

    const other = openHost(ws, { factory, storeKind: "memory" });
    await other.engine.sync();
    expect(snapshot(other.root)).toEqual(snapshot(root));
  });
});
