/**
 * The quick check's blind spot before ctime joined a file's fingerprint
 * (client/scan/stat-key.ts): a same-size rewrite in place that then gets the
 * recorded mtime back (`cp -p x y` over a same-size y with the same mtime,
 * `touch -r`, `rsync -a`, a tar extract with 1-second times) kept the size,
 * mtime, inode and mode the scanner compared. It was never sent, and a later
 * pull of y replaced it without a conflict copy. Its ctime moves with every
 * such rewrite, and nothing can set it back. The first two tests failed on
 * main 3000cf5 (nothing sent; the edit overwritten).
 */
import { chmodSync, linkSync, lstatSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { statKey, utimeSeconds } from "../../client/scan/stat-key.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { nextClockTick, pastRacyWindow, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const factory = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;
const T = 1_700_000_000;

/**
 * `cp -p`: new bytes of the same length written into `path` in place, its
 * mtime set back with `seconds` (what gave it the mtime it had: T for a file
 * this test wrote, the pull's utimeSeconds for a pulled one). Checked to be
 * exactly the recorded mtime, so only the ctime tells the rewrite apart.
 */
function rewriteKeepingMtime(root: string, path: string, bytes: string, seconds: number | string): void {
  const before = lstatOf(root, path);
  writeFileSync(join(root, path), bytes);
  utimesSync(join(root, path), seconds, seconds);
  const after = lstatOf(root, path);
  expect([after.size, after.mtimeNs, after.ino]).toEqual([before.size, before.mtimeNs, before.ino]);
}

describe("a same-size rewrite whose mtime is set back", () => {
  it("is found by the next sync and reaches another host", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { storeKind: "memory", factory });
    writeTree(a.root, { x: "aaaa", y: "bbbb" });
    for (const f of ["x", "y"]) utimesSync(join(a.root, f), T, T);
    await pastRacyWindow();
    await a.engine.sync();
    expect(a.store.get("y")?.stat).toBe(statKey(lstatOf(a.root, "y")));
    // `cp -p x y`: y takes x's bytes and x's mtime, which is y's recorded one.
    rewriteKeepingMtime(a.root, "y", readFileSync(join(a.root, "x"), "utf8"), T);
    const report = await a.engine.sync();
    expect(report.sent.map((s) => s.path)).toEqual(["y"]);
    const b = openHost(ws, { storeKind: "memory", factory });
    await b.engine.sync();
    expect(readFileSync(join(b.root, "y"), "utf8")).toBe("aaaa");
  });

  it("is not overwritten by another host's version of the file", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { storeKind: "memory", factory });
    writeTree(a.root, { y: "bbbb" });
    utimesSync(join(a.root, "y"), T, T);
    await a.engine.sync();
    const b = openHost(ws, { storeKind: "disk", factory });
    await b.engine.sync();
    nextClockTick();
    rewriteKeepingMtime(b.root, "y", "cccc", utimeSeconds(T * 1000));
    writeFileSync(join(a.root, "y"), "from a, longer");
    await a.engine.sync();
    const report = await b.engine.sync();
    // b's edit is kept beside a's version, which wins the path.
    const texts = readdirSync(b.root)
      .filter((n) => n !== ".ferry")
      .map((n) => readFileSync(join(b.root, n), "utf8"))
      .sort();
    expect(texts).toEqual(["cccc", "from a, longer"]);
    expect(report.conflicts.map((c) => c.path)).toEqual(["y"]);
  });
});

describe("a file whose ctime moved and whose bytes did not", () => {
  it("is read again, sends nothing, and gets its fingerprint refreshed", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { storeKind: "disk", factory });
    writeTree(a.root, { mode: "m", touched: "t", linked: "l" });
    for (const f of ["mode", "touched", "linked"]) utimesSync(join(a.root, f), T, T);
    await pastRacyWindow();
    await a.engine.sync();
    // A chmod there and back, a touch set back, a second name outside the root: each moves only the ctime.
    const mode = Number(lstatOf(a.root, "mode").mode & 0o7777n);
    chmodSync(join(a.root, "mode"), 0o600);
    chmodSync(join(a.root, "mode"), mode);
    utimesSync(join(a.root, "touched"), T + 5, T + 5);
    utimesSync(join(a.root, "touched"), T, T);
    linkSync(join(a.root, "linked"), join(tempDir("outside"), "second-name"));
    const moved = ["mode", "touched", "linked"].filter((f) => a.store.get(f)?.stat !== statKey(lstatOf(a.root, f)));
    expect(moved).toEqual(["mode", "touched", "linked"]);
    await pastRacyWindow();
    const report = await a.engine.sync();
    expect([report.entriesSent, report.objectBytesSent, report.stamped]).toEqual([0, 0, 0]);
    for (const f of ["mode", "touched", "linked"]) expect(a.store.get(f)?.stat, f).toBe(statKey(lstatOf(a.root, f)));
  });
});

function lstatOf(root: string, path: string) {
  return lstatSync(join(root, path), { bigint: true });
}
