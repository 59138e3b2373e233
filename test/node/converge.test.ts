import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, MATRIX, newWorkspace, openHost, twoSyncedHosts } from "./support/hosts.ts";
import { chmod, pseudoRandom, snapshot, symlink, writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe.each(MATRIX)("two hosts over $name with $storeKind stores", ({ factory, storeKind }) => {
  it("converge on files, dirs, symlinks, deletes, mode and type changes", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind });
    const b = openHost(ws, { factory, storeKind });
    writeTree(a.root, {
      "readme.md": "hello\n",
      "src/main.ts": "console.log(1)\n",
      "src/lib/util.ts": "export {}\n",
      "big.bin": pseudoRandom(3 * 1024 * 1024, 7),
      "gone-soon.txt": "bye\n",
      "becomes-dir": "a file for now\n",
    });
    mkdirSync(join(a.root, "empty"));
    symlink(a.root, "link-to-readme", "readme.md");
    chmod(a.root, "src/main.ts", 0o755);
    await a.engine.sync();
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root));

    rmSync(join(a.root, "gone-soon.txt"));
    chmod(a.root, "readme.md", 0o600);
    rmSync(join(a.root, "becomes-dir"));
    writeTree(a.root, { "becomes-dir/inner.txt": "now a dir\n" });
    rmSync(join(a.root, "src/lib"), { recursive: true });
    writeFileSync(join(a.root, "src/main.ts"), "console.log(2)\n");
    await a.engine.sync();
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root));

    // And back the other way.
    writeTree(b.root, { "from-b.txt": "b was here\n" });
    rmSync(join(b.root, "empty"), { recursive: true });
    await b.engine.sync();
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("pulls another host's change in the rev its own push only repeated (soak seeds 84, 99)", async () => {
    const { a, b } = await twoSyncedHosts({ "both-delete.txt": "x\n", "edited.txt": "v1\n" }, { factory, storeKind });
    // a's rev deletes the file and edits another; b's push repeats the deletion, writes nothing and
    // is answered with that rev, which holds only a's changes: b must still pull them.
    rmSync(join(a.root, "both-delete.txt"));
    writeFileSync(join(a.root, "edited.txt"), "v2 from a\n");
    await a.engine.sync();
    rmSync(join(b.root, "both-delete.txt"));
    await b.engine.sync({ pull: false });
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root));
  });

  /**
   * b deletes `dir`; a, which has not pulled that deletion, edits `dir/x.txt`
   * over it (the server holds the file under no directory), and b's pull
   * makes `dir` again to hold it.
   */
  async function fileOverDeletedDir() {
    const { ws, a, b } = await twoSyncedHosts({ "dir/x.txt": "x\n", "other.txt": "o\n" }, { factory, storeKind });
    rmSync(join(b.root, "dir"), { recursive: true });
    await b.engine.sync();
    writeFileSync(join(a.root, "dir/x.txt"), "edited on a\n");
    await a.engine.sync({ pull: false });
    await b.engine.sync();
    expect(readFileSync(join(b.root, "dir/x.txt"), "utf8")).toBe("edited on a\n");
    return { ws, a, b };
  }

  it("removes a directory it made again for a file written over its deletion, once the file is deleted (soak seed 18)", async () => {
    const { ws, a, b } = await fileOverDeletedDir();
    rmSync(join(a.root, "dir/x.txt"));
    await a.engine.sync({ pull: false });
    await b.engine.sync();
    const fresh = openHost(ws, { factory, storeKind: "memory" });
    await fresh.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(fresh.root));
    expect(Object.keys(snapshot(b.root))).toEqual(["other.txt"]);
  });

  it("removes a directory it made again for a file written over its deletion, once it deletes the file itself (soak seed 65)", async () => {
    const { ws, a, b } = await fileOverDeletedDir();
    // b deletes the file itself: its own deletion never comes back to it in a pull.
    rmSync(join(b.root, "dir/x.txt"));
    await b.engine.sync();
    await a.engine.sync();
    const fresh = openHost(ws, { factory, storeKind: "memory" });
    await fresh.engine.sync();
    expect(Object.keys(snapshot(fresh.root))).toEqual(["other.txt"]);
    expect(snapshot(b.root)).toEqual(snapshot(fresh.root));
    expect(snapshot(a.root)).toEqual(snapshot(fresh.root));
  });

  it("removes a directory it made again for a file written over its deletion, when both hosts delete the file", async () => {
    const { ws, a, b } = await fileOverDeletedDir();
    // Both delete the file; b pulls a's deletion before it pushes its own, which it then has nothing to push.
    rmSync(join(a.root, "dir/x.txt"));
    await a.engine.sync({ pull: false });
    rmSync(join(b.root, "dir/x.txt"));
    await b.engine.sync();
    const fresh = openHost(ws, { factory, storeKind: "memory" });
    await fresh.engine.sync();
    expect(Object.keys(snapshot(fresh.root))).toEqual(["other.txt"]);
    expect(snapshot(b.root)).toEqual(snapshot(fresh.root));
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(fresh.root));
  });
});
