/**
 * One file never stops a push (client/engine/held-files.ts). A file that
 * keeps changing while it is pushed (a log, a live database) is read again
 * a few times, then skipped and reported; every other file of the push
 * commits, and the next sync sends it once it holds still. So is a file
 * with more chunks than the server takes for one file.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TransportFactory } from "../../client/transport/transport.ts";
import type { OpResponse } from "../../protocol/ops.ts";
import { cleanup, interceptCalls, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const http = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;

/** HTTP, with hello's answer saying one file may have at most `max` chunks (the server's own bound is 60,000). */
function advertisingMaxFileChunks(max: number): TransportFactory {
  return interceptCalls(http, async (op, next) => {
    const res = await next();
    if (op !== "hello") return res;
    const hello = res as OpResponse<"hello">;
    return { ...hello, limits: { ...hello.limits, maxFileChunks: max } } as typeof res;
  });
}

describe("a push with a file that changes while it is read", () => {
  it("skips and reports that file, commits the rest, and sends it next time", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { storeKind: "disk", factory: http });
    writeTree(a.root, { "a.txt": "a\n" });
    await a.engine.sync();
    writeTree(a.root, { "dir/b.txt": "b\n" });
    // Larger than a push sends unprobed (256 KiB, push.ts), so it is probed with `has` first (the
    // workspace is not empty, uploads.ts): the writer gets a turn between scan and upload.
    const hot = join(a.root, "hot.bin");
    writeFileSync(hot, pseudoRandom(300_000, 1));
    let seed = 2;
    const writer = setInterval(() => writeFileSync(hot, pseudoRandom(300_000, seed++)), 0);
    let report: Awaited<ReturnType<typeof a.engine.sync>>;
    try {
      report = await a.engine.sync();
    } finally {
      clearInterval(writer);
    }
    expect(report.skipped).toEqual([{ path: "hot.bin", reason: expect.stringMatching(/^changed while it was read/) }]);

    const b = openHost(ws, { storeKind: "memory", factory: http });
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root, (p) => p === "hot.bin"));

    const again = await a.engine.sync();
    expect([again.skipped, again.sent.map((s) => s.path)]).toEqual([[], ["hot.bin"]]);
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root));
  });
});

describe("a push with a file that has more chunks than the server takes for one file", () => {
  it("skips and reports that file at every sync, and commits the rest", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { storeKind: "disk", factory: advertisingMaxFileChunks(4) });
    // 2 MiB of noise: about eight content-defined chunks.
    writeTree(a.root, { "a.txt": "a\n", "big.bin": pseudoRandom(2 * 1024 * 1024, 5), "z.txt": "z\n" });
    const report = await a.engine.sync();
    expect(report.skipped).toEqual([
      { path: "big.bin", reason: expect.stringMatching(/ chunks, more than the server's 4 for one file$/) },
    ]);
    const b = openHost(ws, { storeKind: "memory", factory: http });
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root, (p) => p === "big.bin"));

    const again = await a.engine.sync();
    expect([again.skipped.map((s) => s.path), again.entriesSent]).toEqual([["big.bin"], 0]);
  });
});
