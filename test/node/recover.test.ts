import { copyFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STORE_DIR, STORE_FILE } from "../../client/store/sqlite-store.ts";
import type { Transport, TransportFactory } from "../../client/transport/transport.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import type { OpName, OpRequest, OpResponse } from "../../protocol/ops.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

/** Wraps a transport: `onCall` may rewrite an answer or throw after the server did its work. */
function intercept(
  factory: TransportFactory,
  onCall: (op: OpName, answer: unknown, n: number) => unknown,
): TransportFactory {
  return (endpoint) => {
    const inner: Transport = factory(endpoint);
    let n = 0;
    return {
      async call<K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> {
        return onCall(op, await inner.call(op, req), ++n) as OpResponse<K>;
      },
      listen: (events) => inner.listen(events),
      close: () => inner.close(),
    };
  };
}

function tree(n: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`d${i % 4}/f${i}.txt`] = `file ${i}\n`;
  return files;
}

describe.each(TRANSPORTS)("recovery over $name", ({ factory }) => {
  it("does not resend a pack whose answer was lost", async () => {
    const ws = newWorkspace();
    let dropped = false;
    const lossy = intercept(factory, (op, answer) => {
      if (op === "push" && !dropped) {
        dropped = true;
        throw new ProtocolError("unavailable", "connection reset after the server applied the pack");
      }
      return answer;
    });
    const a = openHost(ws, { factory: lossy, storeKind: "disk" });
    writeTree(a.root, tree(20));
    await expect(a.engine.sync()).rejects.toMatchObject({ code: "unavailable" });
    const again = await a.engine.sync();
    expect(again.resumedFrom.rev).toBeGreaterThan(0);
    expect(again.entriesSent).toBe(0);
    expect(again.objectBytesSent).toBe(0);
  });

  it("resumes at the server's acked after a cursor mismatch", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind: "disk" });
    writeTree(a.root, tree(10));
    await a.engine.sync();
    await a.close();
    // The host believes the server acknowledged less than it did.
    const stale = intercept(factory, (op, answer) =>
      op === "hello" ? { ...(answer as object), acked: { rev: 3, path: null } } : answer,
    );
    const b = openHost(ws, { factory: stale, storeKind: "disk", root: a.root });
    writeFileSync(join(b.root, "d0/f0.txt"), "changed\n");
    const report = await b.engine.sync();
    expect(report.entriesSent).toBe(1);
    const fresh = openHost(ws, { factory, storeKind: "memory" });
    await fresh.engine.sync();
    expect(snapshot(fresh.root)).toEqual(snapshot(b.root));
  });

  it("continues host revs above acked when the store was restored from an older copy", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind: "disk" });
    writeTree(a.root, tree(12));
    await a.engine.sync();
    await a.close();
    const storeFile = join(a.root, STORE_DIR, STORE_FILE);
    copyFileSync(storeFile, `${storeFile}.backup`);

    const later = openHost(ws, { factory, storeKind: "disk", root: a.root });
    writeTree(later.root, { "later/one.txt": "1\n", "later/two.txt": "2\n" });
    writeFileSync(join(later.root, "d1/f1.txt"), "edited later\n");
    await later.engine.sync();
    await later.close();

    copyFileSync(`${storeFile}.backup`, storeFile);
    const restored = openHost(ws, { factory, storeKind: "disk", root: a.root });
    writeFileSync(join(restored.root, "d2/f2.txt"), "edited after the restore\n");
    const report = await restored.engine.sync();
    expect(report.mode).toBe("reconcile");
    expect(report.conflicts).toEqual([]);
    expect(report.objectBytesReceived).toBe(0);
    expect(restored.store.position().hostRev).toBeGreaterThan(report.resumedFrom.rev);

    const other = openHost(ws, { factory, storeKind: "memory" });
    await other.engine.sync();
    expect(snapshot(other.root)).toEqual(snapshot(restored.root));
    expect(snapshot(other.root)["d2/f2.txt"]).toBeDefined();
  });

  it("reconciles on resync, sending only what differs", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind: "disk" });
    writeTree(a.root, { ...tree(30), "big.bin": pseudoRandom(600_000, 9) });
    await a.engine.sync();
    // As if the server had been restored from a copy older than what this host pulled.
    const position = a.store.position();
    if (!position.pull) throw new Error("no pull position after sync");
    a.store.setPull({ epoch: position.pull.epoch, cursor: { rev: position.pull.cursor.rev + 100, path: null } });
    writeFileSync(join(a.root, "d3/f3.txt"), "changed before the resync\n");
    rmSync(join(a.root, "d0/f0.txt"));
    const report = await a.engine.sync();
    expect(report.mode).toBe("resync");
    expect(report.entriesSent).toBe(2);
    expect(report.objectsSent).toBe(1);
    expect(report.objectBytesReceived).toBe(0);
    const after = await a.engine.sync();
    expect([after.roundTrips, after.entriesSent, after.entriesReceived]).toEqual([1, 0, 0]);
  });
});
