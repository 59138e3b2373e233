import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, MATRIX, newWorkspace, openHost } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");

describe.each(MATRIX)("concurrent changes over $name with $storeKind stores", ({ factory, storeKind }) => {
  async function pair(files: Record<string, string>) {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind });
    const b = openHost(ws, { factory, storeKind });
    writeTree(a.root, files);
    await a.engine.sync();
    await b.engine.sync();
    return { a, b };
  }

  it("keeps both versions of a file both hosts changed", async () => {
    const { a, b } = await pair({ "notes.txt": "v1\n" });
    writeFileSync(join(a.root, "notes.txt"), "from a\n");
    writeFileSync(join(b.root, "notes.txt"), "from b\n");
    await a.engine.sync();
    const report = await b.engine.sync();
    expect(report.conflicts).toHaveLength(1);
    const copy = report.conflicts[0]?.copy as string;
    // No label given to this engine: 8 hex digits of its host id, then the date; the extension stays last.
    expect(copy).toMatch(/^notes\.conflict-[0-9a-f]{8}-\d{8}-\d{6}\.txt$/);
    expect(read(b.root, "notes.txt")).toBe("from a\n");
    expect(read(b.root, copy)).toBe("from b\n");
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("resolves a conflict found on push by pulling and pushing the copy", async () => {
    const { a, b } = await pair({ "f.txt": "v1\n" });
    writeFileSync(join(a.root, "f.txt"), "a wins the race\n");
    await a.engine.sync();
    writeFileSync(join(b.root, "f.txt"), "b pushes blind\n");
    const report = await b.engine.sync({ pull: false });
    expect(report.conflicts.map((c) => c.path)).toEqual(["f.txt"]);
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
    expect(Object.values(snapshot(a.root)).length).toBe(2);
  });

  it("keeps a local edit of a file the other host deleted", async () => {
    const { a, b } = await pair({ "keep.txt": "v1\n", "other.txt": "o\n" });
    rmSync(join(a.root, "keep.txt"));
    writeFileSync(join(b.root, "keep.txt"), "edited on b\n");
    await a.engine.sync();
    const report = await b.engine.sync();
    expect(report.conflicts).toEqual([]);
    await a.engine.sync();
    expect(read(a.root, "keep.txt")).toBe("edited on b\n");
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("keeps a directory the other host deleted when new work is in it", async () => {
    const { a, b } = await pair({ "dir/old.txt": "old\n", "dir/sub/deep.txt": "deep\n" });
    rmSync(join(a.root, "dir"), { recursive: true });
    writeTree(b.root, { "dir/sub/new.txt": "new on b\n" });
    await a.engine.sync();
    await b.engine.sync();
    expect(Object.keys(snapshot(b.root)).sort()).toEqual(["dir", "dir/sub", "dir/sub/new.txt"]);
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("keeps an unpushed local edit as a conflict copy when pulling over it", async () => {
    const { a, b } = await pair({ "x.txt": "v1\n" });
    writeFileSync(join(a.root, "x.txt"), "a v2\n");
    await a.engine.sync();
    writeFileSync(join(b.root, "x.txt"), "b local\n");
    const report = await b.engine.sync({ push: false });
    expect(read(b.root, "x.txt")).toBe("a v2\n");
    expect(read(b.root, report.conflicts[0]?.copy as string)).toBe("b local\n");
  });
});
