/**
 * A pull raced by local work just before it places a file: a save at a
 * target whose new file has been written, a directory that files are being
 * written into replaced by a file, a new directory at a path a later file
 * goes to. The pull must keep every local change (a conflict copy, never an
 * overwrite), leave no temporary behind, and the next syncs must converge.
 */
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mtimeMs, utimeSeconds } from "../../client/scan/stat-key.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { nextClockTick, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const factory = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;

/** 3 directories of 12 files each, each file's content its own. */
function sourceTree(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let d = 0; d < 3; d++) for (let f = 0; f < 12; f++) files[`d${d}/f${f}`] = `file ${d} ${f}\n`.repeat(f + 1);
  return files;
}

/** Local work done on the pulling host at the moment the pull is about to place a path. */
const RACES: Record<string, (root: string) => void> = {
  // A save at the target itself, made while its new version was written.
  "d0/f3": (root) => writeFileSync(join(root, "d0/f3"), "saved locally\n"),
  // The directory the next files are being written into, replaced by a file.
  "d1/f5": (root) => {
    rmSync(join(root, "d1"), { recursive: true });
    writeFileSync(join(root, "d1"), "a file where the directory was\n");
  },
  // A new directory at a path a later file of the page goes to.
  "d2/f1": (root) => mkdirSync(join(root, "d2/f7")),
  // A new file at such a path, in a directory the pull made (decided there without a look: apply-state.ts).
  "d0/f5": (root) => writeFileSync(join(root, "d0/f9"), "made locally\n"),
};

/** A conflict copy's name without its host and time. */
const copyName = (text: string) => text.replace(/\.conflict-[0-9a-f]+-[0-9]+-[0-9]+/g, ".conflict");
const named = (tree: Record<string, string>) =>
  Object.fromEntries(Object.entries(tree).map(([path, what]) => [copyName(path), what]));

describe("a pull raced by local work", () => {
  it("keeps every local change, leaves no temporary, and the hosts converge", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "memory", factory });
    writeTree(src.root, sourceTree());
    await src.engine.sync();
    const fired = new Set<string>();
    const dst = openHost(ws, {
      storeKind: "memory",
      factory,
      beforeReplace: (path) => {
        const race = RACES[path];
        if (race && !fired.has(path)) {
          fired.add(path);
          race(dst.root);
        }
      },
    });
    const report = await dst.engine.sync();
    const tree = named(snapshot(dst.root));
    expect([...fired].sort()).toEqual(Object.keys(RACES).sort());
    // No temporary left, the save kept as it was (a conflict copy, never an overwrite).
    expect(Object.keys(tree).filter((p) => p.includes(".ferry-tmp-"))).toEqual([]);
    expect(report.conflicts.map((c) => c.path)).toContain("d0/f3");
    const kept = (path: string) =>
      Object.keys(snapshot(dst.root))
        .filter((p) => p.startsWith(path))
        .map((p) => readFileSync(join(dst.root, p), "utf8"));
    expect(kept("d0/f3")).toContain("saved locally\n");
    expect(kept("d0/f9")).toContain("made locally\n");
    expect(readFileSync(join(dst.root, "d0/f9"), "utf8")).toBe(sourceTree()["d0/f9"]);
    // The local work is sent, and both hosts end with one tree.
    await dst.engine.sync();
    await src.engine.sync();
    expect(snapshot(src.root)).toEqual(snapshot(dst.root));
    await dst.close();
  });

  it("sends a same-size rewrite made right after a file was placed, its mtime set back", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "memory", factory });
    writeTree(src.root, sourceTree());
    await src.engine.sync();
    const rewritten = "FILE 0 3\n".repeat(4);
    let placed: bigint | null = null;
    const dst = openHost(ws, {
      storeKind: "memory",
      factory,
      // Before the pull's next look at the path (its fingerprint is the placed file's, taken already).
      afterPlace: (path) => {
        if (path !== "d0/f3" || placed !== null) return;
        const abs = join(dst.root, path);
        placed = lstatSync(abs, { bigint: true }).mtimeNs;
        nextClockTick();
        const ms = mtimeMs(lstatSync(abs, { bigint: true }));
        writeFileSync(abs, rewritten);
        utimesSync(abs, utimeSeconds(ms), utimeSeconds(ms));
      },
    });
    await dst.engine.sync();
    const now = lstatSync(join(dst.root, "d0/f3"), { bigint: true });
    // The rewrite kept the size and the mtime the pull gave: only its ctime tells it apart.
    expect([now.mtimeNs, now.size]).toEqual([placed, BigInt(rewritten.length)]);
    const report = await dst.engine.sync();
    expect(report.sent.map((s) => s.path)).toEqual(["d0/f3"]);
    await src.engine.sync();
    expect(readFileSync(join(src.root, "d0/f3"), "utf8")).toBe(rewritten);
  });

  it("sends a directory's mode set locally right after the pull set the server's", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "disk", factory });
    writeTree(src.root, sourceTree());
    await src.engine.sync();
    let raced = false;
    const dst = openHost(ws, {
      storeKind: "disk",
      factory,
      // Before the pull takes the directory's fingerprint: a local chmod lands between its chmod and its look.
      afterPlace: (path) => {
        if (path !== "d1" || !raced) return;
        chmodSync(join(dst.root, path), 0o711);
      },
    });
    await dst.engine.sync();
    chmodSync(join(src.root, "d1"), 0o750);
    await src.engine.sync();
    raced = true;
    await dst.engine.sync();
    const mode = (root: string) => lstatSync(join(root, "d1")).mode & 0o7777;
    expect(mode(dst.root), "the local chmod came last").toBe(0o711);
    const report = await dst.engine.sync();
    expect(report.sent.map((s) => s.path)).toEqual(["d1"]);
    await src.engine.sync();
    expect(mode(src.root)).toBe(0o711);
  });

  it("sends a chmod to the mode a pull held a locked directory at while it wrote", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "disk", factory });
    writeTree(src.root, sourceTree());
    await src.engine.sync();
    const dst = openHost(ws, { storeKind: "disk", factory });
    await dst.engine.sync();
    // Without owner write: the pull holds it at 0700 while it writes, and sets 0500 when it ends (dir-modes.ts).
    chmodSync(join(src.root, "d2"), 0o500);
    await src.engine.sync();
    await dst.engine.sync();
    const mode = (root: string) => lstatSync(join(root, "d2")).mode & 0o7777;
    expect(mode(dst.root)).toBe(0o500);
    chmodSync(join(dst.root, "d2"), 0o700);
    const report = await dst.engine.sync();
    expect(report.sent.map((s) => s.path)).toEqual(["d2"]);
    await src.engine.sync();
    expect(mode(src.root)).toBe(0o700);
  });
});
