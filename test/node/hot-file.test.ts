/**
 * A file that keeps changing while it is pushed (a log, a live database) is
 * read again a few times, then skipped and reported; every other file of
 * the push commits, and the next sync sends it once it holds still.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const http = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;

describe("a push with a file that changes while it is read", () => {
  it("skips and reports that file, commits the rest, and sends it next time", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { storeKind: "disk", factory: http });
    writeTree(a.root, { "a.txt": "a\n" });
    await a.engine.sync();
    writeTree(a.root, { "dir/b.txt": "b\n" });
    // Large enough to be probed with `has` first (the workspace is not empty, uploads.ts): the
    // writer gets a turn between scan and upload.
    const hot = join(a.root, "hot.bin");
    writeFileSync(hot, pseudoRandom(200_000, 1));
    let seed = 2;
    const writer = setInterval(() => writeFileSync(hot, pseudoRandom(200_000, seed++)), 0);
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
