/**
 * A pull downloads each chunk once, however many files or offsets hold it:
 * a sparse file (one chunk of zeros over and over) costs one object.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TransportFactory } from "../../client/transport/transport.ts";
import type { OpName } from "../../protocol/ops.ts";
import { cleanup, interceptCalls, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

/** A transport factory that counts requests by operation. */
function counting(counts: Map<OpName, number>): TransportFactory {
  return interceptCalls((TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory, (op, next) => {
    counts.set(op, (counts.get(op) ?? 0) + 1);
    return next();
  });
}

describe("a pull", () => {
  it("fetches a chunk a file repeats once, and copies it for the other files that hold it", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "disk", factory: counting(new Map()) });
    // 40 MiB of zeros: forty identical 1 MiB chunks, past the pull's 32 MiB prefetch batch.
    writeFileSync(join(src.root, "sparse.img"), new Uint8Array(40 * 1024 * 1024));
    writeFileSync(join(src.root, "small-zeros.bin"), new Uint8Array(3 * 1024 * 1024));
    writeTree(src.root, { "note.txt": "hello\n" });
    await src.engine.sync();

    const counts = new Map<OpName, number>();
    const dst = openHost(ws, { storeKind: "memory", factory: counting(counts) });
    const report = await dst.engine.sync();
    expect(snapshot(dst.root)).toEqual(snapshot(src.root));
    expect([report.objectsReceived, counts.get("getObjects")]).toEqual([2, 1]);
    expect(report.objectBytesReceived).toBe(1024 * 1024 + 6);
  });

  it("copies a chunk an earlier pull placed, named by the store's chunk sources, instead of fetching it", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "disk", factory: counting(new Map()) });
    const bytes = new Uint8Array(256 * 1024).map((_, i) => (i * 7) % 251);
    writeFileSync(join(src.root, "a.bin"), bytes);
    await src.engine.sync();
    const dst = openHost(ws, { storeKind: "disk", factory: counting(new Map()) });
    expect((await dst.engine.sync()).objectBytesReceived).toBe(bytes.byteLength);

    // A copy of a.bin on the source: the next pull reads its bytes from the a.bin it placed before.
    writeFileSync(join(src.root, "copy.bin"), bytes);
    await src.engine.sync();
    const report = await dst.engine.sync();
    expect(report.received.map((r) => r.path)).toEqual(["copy.bin"]);
    expect(report.objectBytesReceived).toBe(0);
    expect(snapshot(dst.root)).toEqual(snapshot(src.root));
  });
});
