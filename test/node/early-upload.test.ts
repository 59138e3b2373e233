import { afterEach, describe, expect, it } from "vitest";
import type { ProgressSink } from "../../client/engine/report.ts";
import { SyncEngine } from "../../client/engine/sync.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { Transport, TransportFactory } from "../../client/transport/transport.ts";
import type { OpName } from "../../protocol/ops.ts";
import { cleanup, endpointFor, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const KiB = 1024;

/** 48 files of 200 KiB (one chunk each, 9.4 MiB), every fourth one a copy of another. */
function largeTree(seed: number): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  for (let i = 0; i < 48; i++)
    files[`pkg${i % 5}/file${i}.bin`] = pseudoRandom(200 * KiB, seed + (i % 4 === 3 ? i - 1 : i));
  return files;
}

/** A real engine whose calls are logged with whether the scan had ended when each was made, and the object bytes they carried. */
function loggedHost(workspace: string, factory: TransportFactory, options: { maxEarlyUploadBytes?: number } = {}) {
  const root = tempDir();
  const calls: { op: OpName; duringScan: boolean; objectBytes: number }[] = [];
  let scanning = false;
  const progress: ProgressSink = {
    begin: (task) => {
      if (task === "scan") scanning = true;
    },
    advance: () => {},
    end: (task) => {
      if (task === "scan") scanning = false;
    },
  };
  const inner = factory(endpointFor(workspace));
  const transport: Transport = {
    call: (op, req) => {
      const objects = (req as { objects?: { bytes: Uint8Array }[] }).objects ?? [];
      const objectBytes = objects.reduce((n, o) => n + o.bytes.byteLength, 0);
      calls.push({ op, duringScan: scanning, objectBytes });
      return inner.call(op, req);
    },
    listen: (events) => inner.listen(events),
    close: () => inner.close(),
  };
  const store = openStore("memory", root);
  const engine = new SyncEngine({ root, store, transport, progress, ...options });
  return {
    root,
    engine,
    calls,
    close: async () => {
      await transport.close();
      store.close();
    },
  };
}

/** A new host pulling the workspace gets exactly the tree at `root`. */
async function expectPulledCopy(ws: string, factory: TransportFactory, root: string): Promise<void> {
  const other = openHost(ws, { factory, storeKind: "memory" });
  await other.engine.sync();
  expect(snapshot(other.root)).toEqual(snapshot(root));
}

describe.each(TRANSPORTS)("uploading while scanning over $name", ({ factory }) => {
  it("sends a large tree's chunks during the scan, each once, and the push only entries", async () => {
    const ws = newWorkspace();
    const host = loggedHost(ws, factory);
    const files = largeTree(7);
    writeTree(host.root, files);
    const distinct = new Set(Object.values(files).map((b) => Buffer.from(b).toString("base64")));
    const report = await host.engine.sync();
    await host.close();

    const uploadsDuringScan = host.calls.filter((c) => c.op === "putObjects" && c.duringScan).length;
    expect(uploadsDuringScan).toBeGreaterThan(0);
    // Every distinct file's bytes once, whichever path sent them (early batches, or the push's leftovers).
    expect(report.objectBytesSent).toBe(distinct.size * 200 * KiB);

    await expectPulledCopy(ws, factory, host.root);
  });

  it("probes before it uploads: a copy of held files sends no bytes", async () => {
    const ws = newWorkspace();
    const host = loggedHost(ws, factory);
    const files = largeTree(11);
    writeTree(host.root, files);
    await host.engine.sync();
    const copies = Object.fromEntries(Object.entries(files).map(([path, bytes]) => [`copy/${path}`, bytes]));
    writeTree(host.root, copies);
    host.calls.length = 0;
    const report = await host.engine.sync();
    await host.close();
    expect(report.mode).toBe("incremental");
    expect(host.calls.filter((c) => c.op === "has" && c.duringScan).length).toBeGreaterThan(0);
    expect(report.objectBytesSent).toBe(0);
    expect(report.entriesSent).toBe(Object.keys(copies).length + 6); // the files and copy/, copy/pkg0..4
  });

  it("reads files it just pushed again without probing their chunks: the rescan is one round trip", async () => {
    const ws = newWorkspace();
    const host = loggedHost(ws, factory);
    writeTree(host.root, largeTree(17));
    await host.engine.sync();
    host.calls.length = 0;
    // Written within the last second, the files were racily clean: this scan hashes them all again.
    const report = await host.engine.sync();
    await host.close();
    expect(host.calls.map((c) => c.op)).toEqual(["hello"]);
    expect(report.roundTrips).toBe(1);
  });

  it("does not upload while scanning for a lost store: the reconcile finds what the server holds", async () => {
    const ws = newWorkspace();
    const first = openHost(ws, { factory, storeKind: "memory" });
    writeTree(first.root, largeTree(13));
    await first.engine.sync();
    await first.close();

    const again = loggedHost(ws, factory);
    writeTree(again.root, largeTree(13));
    const report = await again.engine.sync();
    await again.close();
    expect(report.mode).toBe("reconcile");
    expect(again.calls.filter((c) => c.duringScan)).toEqual([]);
    expect(report.objectBytesSent).toBe(0);
    expect(report.entriesSent).toBe(0);
  });

  it("sends a file larger than what it may hold once, partly early and the rest with the push", async () => {
    const ws = newWorkspace();
    // The scan pauses between a file's blocks (4 MiB), but one block's chunks are more than
    // the 2 MiB it may hold: past the bound, they are left to the push.
    const held = 2 * 1024 * KiB;
    const host = loggedHost(ws, factory, { maxEarlyUploadBytes: held });
    const big = pseudoRandom(24 * 1024 * KiB, 21);
    writeTree(host.root, { "big.bin": big });
    const report = await host.engine.sync();
    await host.close();
    const sent = (duringScan: boolean) =>
      host.calls.filter((c) => c.duringScan === duringScan).reduce((n, c) => n + c.objectBytes, 0);
    expect(sent(true)).toBeGreaterThan(0);
    // No batch during the scan carries more than it may hold, plus the chunk that crossed the bound (1 MiB at most).
    for (const c of host.calls.filter((c) => c.duringScan))
      expect(c.objectBytes).toBeLessThanOrEqual(held + 1024 * KiB);
    expect(sent(false)).toBeGreaterThan(0);
    expect(sent(true) + sent(false)).toBe(big.byteLength);
    expect(report.objectBytesSent).toBe(big.byteLength);

    await expectPulledCopy(ws, factory, host.root);
  });

  it("sends a file larger than what it may hold while scanning it, pausing between its blocks", async () => {
    const ws = newWorkspace();
    // 20 MiB held has room for the largest batch (12 MiB) and a block's chunks (5 MiB at most):
    // the scan waits for answers within the file instead of leaving its chunks to the push, which
    // read and hashed them again (before, everything past the first 20 MiB went with the push).
    const host = loggedHost(ws, factory, { maxEarlyUploadBytes: 20 * 1024 * KiB });
    const big = pseudoRandom(40 * 1024 * KiB, 22);
    writeTree(host.root, { "big.bin": big });
    const report = await host.engine.sync();
    await host.close();
    const sent = (duringScan: boolean) =>
      host.calls.filter((c) => c.duringScan === duringScan).reduce((n, c) => n + c.objectBytes, 0);
    // What the push sends inline is what the scan's end left queued: less than one flush (1 MiB).
    expect(sent(false)).toBeLessThan(1024 * KiB);
    expect(sent(true) + sent(false)).toBe(big.byteLength);
    expect(report.objectBytesSent).toBe(big.byteLength);

    await expectPulledCopy(ws, factory, host.root);
  });

  it("leaves a small change to the push: no calls during the scan", async () => {
    const ws = newWorkspace();
    const host = loggedHost(ws, factory);
    writeTree(host.root, { "a.txt": "small\n", "b/c.bin": pseudoRandom(100 * KiB, 3) });
    const report = await host.engine.sync();
    await host.close();
    expect(host.calls.filter((c) => c.duringScan)).toEqual([]);
    expect(report.objectBytesSent).toBe(6 + 100 * KiB);
  });

  /** After a first sync, `count` new files of `size` bytes: the calls of the sync that sends them. */
  async function syncNewFiles(count: number, size: number): Promise<OpName[]> {
    const ws = newWorkspace();
    const host = loggedHost(ws, factory);
    writeTree(host.root, { "a.txt": "first\n" });
    await host.engine.sync();
    host.calls.length = 0;
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < count; i++) files[`pkg/f${i}.bin`] = pseudoRandom(size, 40 + i);
    writeTree(host.root, files);
    const report = await host.engine.sync();
    await host.close();
    expect(report.objectBytesSent).toBe(count * size);
    await expectPulledCopy(ws, factory, host.root);
    return host.calls.map((c) => c.op);
  }

  it("leaves a change smaller than its first batch to the push: one probe, then the push with the objects", async () => {
    // 1.5 MiB of new content in 24 files: more than a small change's 256 KiB, less than the first batch's 2 MiB.
    expect(await syncNewFiles(24, 64 * KiB)).toEqual(["hello", "has", "push"]);
  });

  it("sends a commit's few dozen small files with the push, unprobed: hello and push", async () => {
    // 30 files of 6 KiB (180 KiB): a replayed hono version's usual change.
    expect(await syncNewFiles(30, 6 * KiB)).toEqual(["hello", "push"]);
  });
});
