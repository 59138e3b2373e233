/**
 * The pull re-checks a path right before it renames over it or removes it:
 * a local change made after the decision (a save while a download ran) is
 * kept, never replaced. `beforeReplace` makes the race happen every time.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, MATRIX, newWorkspace, openHost } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");

describe.each(MATRIX)("the pull's re-check over $name with $storeKind stores", ({ factory, storeKind }) => {
  function pair(race: (root: string, path: string) => void) {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind });
    let armed = false;
    const b = openHost(ws, {
      factory,
      storeKind,
      beforeReplace: (path) => {
        if (!armed) return;
        armed = false;
        race(b.root, path);
      },
    });
    return { a, b, arm: () => (armed = true) };
  }

  it("keeps a save made while the new version downloaded", async () => {
    const { a, b, arm } = pair((root, path) => writeFileSync(join(root, path), "saved on b mid-download\n"));
    writeTree(a.root, { "big.bin": pseudoRandom(256 * 1024, 1) });
    await a.engine.sync();
    await b.engine.sync();
    writeTree(a.root, { "big.bin": pseudoRandom(300 * 1024, 2) });
    await a.engine.sync();
    arm();
    const report = await b.engine.sync();
    expect(report.conflicts.map((c) => c.path)).toEqual(["big.bin"]);
    expect(read(b.root, report.conflicts[0]?.copy as string)).toBe("saved on b mid-download\n");
    expect(readFileSync(join(b.root, "big.bin"))).toEqual(Buffer.from(pseudoRandom(300 * 1024, 2)));
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("keeps a save made between the decision to delete a file and the unlink", async () => {
    const { a, b, arm } = pair((root, path) => writeFileSync(join(root, path), "saved on b\n"));
    writeTree(a.root, { "doomed.txt": "v1\n" });
    await a.engine.sync();
    await b.engine.sync();
    rmSync(join(a.root, "doomed.txt"));
    await a.engine.sync();
    arm();
    await b.engine.sync();
    expect(read(b.root, "doomed.txt")).toBe("saved on b\n");
    await a.engine.sync();
    expect(read(a.root, "doomed.txt")).toBe("saved on b\n");
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("keeps a file created in a directory between the decision to remove it and the removal", async () => {
    const { a, b, arm } = pair((root, path) => writeFileSync(join(root, path, "new.txt"), "new on b\n"));
    writeTree(a.root, { "dir/old.txt": "old\n" });
    await a.engine.sync();
    await b.engine.sync();
    rmSync(join(a.root, "dir"), { recursive: true });
    await a.engine.sync();
    arm();
    await b.engine.sync();
    expect(readdirSync(join(b.root, "dir"))).toEqual(["new.txt"]);
    await a.engine.sync();
    expect(read(a.root, "dir/new.txt")).toBe("new on b\n");
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });
});
