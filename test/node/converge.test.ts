import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, MATRIX, newWorkspace, openHost } from "./support/hosts.ts";
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
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind });
    const b = openHost(ws, { factory, storeKind });
    writeTree(a.root, { "both-delete.txt": "x\n", "edited.txt": "v1\n" });
    await a.engine.sync();
    await b.engine.sync();
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
});
