/**
 * Issue 9 case 6, end to end: a host whose store was lost (`--memory`, or a
 * deleted store) reconciles against the server's history (PROTOCOL.md §9.3):
 * a local state the server had before is stale and takes the server's state,
 * deletions included, without a conflict copy; a state the server never had
 * is local work, kept at its path and pushed.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");
const conflictCopies = (root: string) => readdirSync(root, { recursive: true }).filter((p) => /conflict/.test(`${p}`));

describe.each(TRANSPORTS)("a host that lost its store over $name", ({ factory }) => {
  /** A (on disk) and B (in memory) share a tree; B's process then ends, so its store is gone. */
  async function sharedThenLost() {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind: "disk" });
    const b = openHost(ws, { factory, storeKind: "memory" });
    writeTree(a.root, { "keep.txt": "k1\n", "edit.txt": "e1\n", "gone.txt": "g1\n", "dir/gone-too.txt": "d1\n" });
    await a.engine.sync();
    await b.engine.sync();
    await b.close();
    return { ws, a, bRoot: b.root };
  }

  it("takes deletions and edits made elsewhere, and pushes no conflict copy, when it changed nothing", async () => {
    const { ws, a, bRoot } = await sharedThenLost();
    writeFileSync(join(a.root, "edit.txt"), "e2 from a\n");
    rmSync(join(a.root, "gone.txt"));
    rmSync(join(a.root, "dir"), { recursive: true });
    await a.engine.sync();

    const b = openHost(ws, { factory, storeKind: "memory", root: bRoot });
    const report = await b.engine.sync();
    expect(report.conflicts).toEqual([]);
    expect(existsSync(join(bRoot, "gone.txt"))).toBe(false);
    expect(existsSync(join(bRoot, "dir"))).toBe(false);
    expect(read(bRoot, "edit.txt")).toBe("e2 from a\n");
    expect(conflictCopies(bRoot)).toEqual([]);
    await a.engine.sync();
    expect(existsSync(join(a.root, "gone.txt"))).toBe(false);
    expect(conflictCopies(a.root)).toEqual([]);
    expect(snapshot(a.root)).toEqual(snapshot(bRoot));
  });

  it("keeps at their paths the edits it made while its store was lost, and pushes them", async () => {
    const { ws, a, bRoot } = await sharedThenLost();
    writeFileSync(join(a.root, "keep.txt"), "k2 from a\n");
    await a.engine.sync();
    writeFileSync(join(bRoot, "edit.txt"), "e2 made on b while its store was lost\n");
    writeFileSync(join(bRoot, "new.txt"), "new on b\n");

    const b = openHost(ws, { factory, storeKind: "memory", root: bRoot });
    const report = await b.engine.sync();
    expect(report.conflicts).toEqual([]);
    expect(read(bRoot, "edit.txt")).toBe("e2 made on b while its store was lost\n");
    expect(read(bRoot, "keep.txt")).toBe("k2 from a\n");
    await a.engine.sync();
    expect(read(a.root, "edit.txt")).toBe("e2 made on b while its store was lost\n");
    expect(read(a.root, "new.txt")).toBe("new on b\n");
    expect(snapshot(a.root)).toEqual(snapshot(bRoot));
  });
});
