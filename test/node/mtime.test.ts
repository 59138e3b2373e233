/**
 * Modification times round-trip exactly, in integer milliseconds, for files
 * and directories: a pull sets a file's before it is renamed into place and
 * a directory's after its contents are written (which move it).
 */
import { lstatSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mtimeMs } from "../../client/scan/stat-key.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

const http = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;
const msOf = (root: string, path: string) => mtimeMs(lstatSync(join(root, path), { bigint: true }));

/** Sets a path's mtime to `ms` exactly, whatever the double rounding of ms / 1000, before 1970 too. */
function touch(root: string, path: string, ms: number): void {
  const seconds = String((ms + 0.5) / 1000);
  utimesSync(join(root, path), seconds, seconds);
}

describe("mtime", () => {
  it("comes back to the millisecond on files and directories", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { storeKind: "disk", factory: http });
    writeTree(a.root, { "f.txt": "f\n", "d/g.txt": "g\n", "d/e/h.txt": "h\n", "old/1969.txt": "x\n" });
    // ms / 1000 of these lands below the millisecond as a double: they came back 1 ms early.
    const times: Record<string, number> = {
      "f.txt": 1_700_000_000_123,
      "d/g.txt": 1_600_000_000_001,
      "d/e/h.txt": 1_500_000_000_999,
      "d/e": 1_400_000_000_123,
      d: 1_300_000_000_457,
      // Before 1970 (mtime may be negative, PROTOCOL.md §3): Node's utimes reads a negative number as "now".
      "old/1969.txt": -1_234_567,
      old: -500,
    };
    for (const [path, ms] of Object.entries(times)) touch(a.root, path, ms);
    await a.engine.sync();
    const b = openHost(ws, { storeKind: "memory", factory: http });
    await b.engine.sync();
    for (const [path, ms] of Object.entries(times)) expect([path, msOf(b.root, path)]).toEqual([path, ms]);
  });

  it("syncs an mtime-only change as an entry, without object bytes either way", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { storeKind: "disk", factory: http });
    writeTree(a.root, { "small.txt": "small\n", "big.bin": "x".repeat(200_000) });
    await a.engine.sync();
    const b = openHost(ws, { storeKind: "disk", factory: http });
    await b.engine.sync();
    touch(a.root, "small.txt", 1_650_000_000_321);
    touch(a.root, "big.bin", 1_650_000_000_654);
    const pushed = await a.engine.sync();
    expect([pushed.entriesSent, pushed.objectBytesSent]).toEqual([2, 0]);
    const pulled = await b.engine.sync();
    expect([pulled.entriesReceived, pulled.objectBytesReceived, pulled.entriesSent]).toEqual([2, 0, 0]);
    expect([msOf(b.root, "small.txt"), msOf(b.root, "big.bin")]).toEqual([1_650_000_000_321, 1_650_000_000_654]);
    // Settled: neither side has anything more to send.
    const again = await b.engine.sync();
    expect([again.entriesSent, again.entriesReceived]).toEqual([0, 0]);
  });
});
