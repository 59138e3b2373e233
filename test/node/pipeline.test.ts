import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chunkFile } from "../../client/content/file-chunks.ts";
import { SyncEngine } from "../../client/engine/sync.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { Transport, TransportFactory } from "../../client/transport/transport.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import type { OpName } from "../../protocol/ops.ts";
import { cleanup, endpointFor, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const KiB = 1024;

/** 48 files of 200 KiB, one chunk each (9.4 MiB). */
function tree(seed: number): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  for (let i = 0; i < 48; i++) files[`pkg${i % 5}/file${i}.bin`] = pseudoRandom(200 * KiB, seed + i);
  return files;
}

/**
 * A transport that logs every call and holds the first answer of `gated`
 * until a second call of it is made (or 5 s pass): a host that waits for
 * each answer before its next request never overlaps, one that pipelines does.
 */
function gatedTransport(inner: Transport, gated: OpName | null) {
  const calls: OpName[] = [];
  let release: (() => void) | null = null;
  const gate = { overlapped: null as boolean | null };
  const transport: Transport = {
    call: async (op, req) => {
      calls.push(op);
      if (op !== gated || gate.overlapped !== null) return inner.call(op, req);
      if (release) {
        gate.overlapped = true;
        release();
        return inner.call(op, req);
      }
      const answer = inner.call(op, req);
      await new Promise<void>((resolve) => {
        release = resolve;
        setTimeout(() => {
          gate.overlapped ??= false;
          resolve();
        }, 5000);
      });
      return answer;
    },
    listen: (events) => inner.listen(events),
    close: () => inner.close(),
  };
  return { transport, calls, gate };
}

/**
 * A transport that answers every call of `op` no sooner than `ms` after it
 * was made, and records the most calls of it in flight at once.
 */
function slowTransport(inner: Transport, op: OpName, ms: number) {
  const seen = { inFlight: 0, most: 0 };
  const transport: Transport = {
    call: async (called, req) => {
      if (called !== op) return inner.call(called, req);
      seen.inFlight++;
      seen.most = Math.max(seen.most, seen.inFlight);
      try {
        const [answer] = await Promise.all([inner.call(called, req), new Promise((r) => setTimeout(r, ms))]);
        return answer;
      } finally {
        seen.inFlight--;
      }
    },
    listen: (events) => inner.listen(events),
    close: () => inner.close(),
  };
  return { transport, seen };
}

/** A host of a real engine over `transport` (a wrapper around the workspace's). */
function hostOver(transport: Transport, options: { maxEarlyUploadBytes?: number } = {}) {
  const root = tempDir();
  const store = openStore("memory", root);
  const engine = new SyncEngine({ root, store, transport, ...options });
  return {
    root,
    engine,
    close: async () => {
      await transport.close();
      store.close();
    },
  };
}

function gatedHost(
  workspace: string,
  factory: TransportFactory,
  gated: OpName | null,
  options: { maxEarlyUploadBytes?: number } = {},
) {
  const { transport, calls, gate } = gatedTransport(factory(endpointFor(workspace)), gated);
  return { ...hostOver(transport, options), calls, gate };
}

describe.each(TRANSPORTS)("a pipelined push and pull over $name", ({ factory }) => {
  it("asks no `has` on a first push into an empty workspace, and keeps several uploads in flight", async () => {
    const ws = newWorkspace();
    const host = gatedHost(ws, factory, "putObjects");
    const files = tree(1);
    writeTree(host.root, files);
    const report = await host.engine.sync();
    await host.close();
    expect(host.calls.filter((op) => op === "has")).toEqual([]);
    expect(host.gate.overlapped).toBe(true);
    expect(report.objectBytesSent).toBe(48 * 200 * KiB);

    const other = openHost(ws, { factory, storeKind: "memory" });
    await other.engine.sync();
    expect(snapshot(other.root)).toEqual(snapshot(host.root));
  });

  it("probes on a rerun of a first push whose uploads the server holds: nothing is resent", async () => {
    const ws = newWorkspace();
    // Holding at most 1 MiB while scanning, one batch goes before the push: the window is that batch.
    const host = gatedHost(ws, factory, null, { maxEarlyUploadBytes: 1024 * KiB });
    writeTree(host.root, tree(2));
    // Uploaded and never pushed (an interrupted first push): the workspace is still at rev 0, and
    // hello says it holds objects (holdsObjects), so the host probes from the start.
    const objects: ObjectBlob[] = [];
    for (const path of Object.keys(tree(2)))
      chunkFile(join(host.root, path), (hash, bytes) => objects.push({ hash, bytes: new Uint8Array(bytes) }));
    const uploader = factory(endpointFor(ws));
    // Sixteen objects (~3 MB) a body: one holds at most maxBodyBytes.
    for (let at = 0; at < objects.length; at += 16)
      await uploader.call("putObjects", { objects: objects.slice(at, at + 16) });
    await uploader.close();

    const report = await host.engine.sync();
    await host.close();
    expect(host.calls.filter((op) => op === "has").length).toBeGreaterThan(0);
    expect(report.objectBytesSent).toBe(0);
    expect(report.entriesSent).toBe(48 + 5);
  });

  it("keeps several objects/get in flight while pulling", async () => {
    const ws = newWorkspace();
    const pusher = openHost(ws, { factory, storeKind: "memory" });
    writeTree(pusher.root, tree(3));
    await pusher.engine.sync();

    const host = gatedHost(ws, factory, "getObjects");
    const report = await host.engine.sync();
    await host.close();
    expect(host.gate.overlapped).toBe(true);
    expect(report.objectBytesReceived).toBe(48 * 200 * KiB);
    expect(snapshot(host.root)).toEqual(snapshot(pusher.root));
  });

  it("asks a large file's next windows while one is written, up to three objects/get in flight", async () => {
    const ws = newWorkspace();
    const pusher = openHost(ws, { factory, storeKind: "memory" });
    // Past the pull's prefetch (32 MiB), so fetched window by window (16 chunks) as it is written.
    const big = pseudoRandom(40 * 1024 * KiB, 4);
    writeTree(pusher.root, { "big.bin": big });
    await pusher.engine.sync();

    // Each answer takes at least 200 ms: one window asked ahead at a time never had more than two out.
    const { transport, seen } = slowTransport(factory(endpointFor(ws)), "getObjects", 200);
    const host = hostOver(transport);
    const report = await host.engine.sync();
    await host.close();
    expect(seen.most).toBe(3);
    expect(report.objectBytesReceived).toBe(big.byteLength);
    expect(snapshot(host.root)).toEqual(snapshot(pusher.root));
  });
});
