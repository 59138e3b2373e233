/**
 * The pull re-checks a path right before it renames over it or removes it:
 * a local change made after the decision (a save while a download ran) is
 * kept, never replaced. `beforeReplace` makes the race happen every time.
 */
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TEMP_PREFIX } from "../../client/scan/ignore-rules.ts";
import type { HostStore } from "../../client/store/store.ts";
import { cleanup, MATRIX, newWorkspace, openHost } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");

describe.each(MATRIX)("the pull's re-check over $name with $storeKind stores", ({ factory, storeKind }) => {
  /**
   * Two hosts; once armed, `race` runs on b at one moment of its next pull:
   * right before a replace is re-checked (beforeReplace), after the re-check
   * passed, right before the rename, unlink or chmod (atReplace), right after
   * a symlink or directory is put in place (afterPlace), or as the
   * store forgets a record (the pull moving a local version aside to a
   * conflict copy).
   */
  function pair(
    race: (root: string, path: string) => void,
    at: "replace" | "checked" | "placed" | "forget" = "replace",
  ) {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind });
    let armed = false;
    const fire = (path: string) => {
      if (!armed) return;
      armed = false;
      race(b.root, path);
    };
    const b = openHost(ws, {
      factory,
      storeKind,
      ...(at === "replace" ? { beforeReplace: fire } : {}),
      ...(at === "checked" ? { atReplace: fire } : {}),
      ...(at === "placed" ? { afterPlace: fire } : {}),
      ...(at === "forget" ? { wrapStore: (store: HostStore) => forgetting(store, fire) } : {}),
    });
    return { a, b, arm: () => (armed = true), armed: () => armed };
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

  // Right after b's pull puts a symlink or directory at `path`, a local process replaces it with a file. The
  // file is b's work: its next sync sends it, where a record taking it for what the pull placed sent nothing
  // and a later pull replaced it with no copy (soak seed 37).
  it.each([
    { kind: "symlink", path: "ln", make: (root: string) => symlinkSync("t1", join(root, "ln")) },
    { kind: "directory", path: "d", make: (root: string) => mkdirSync(join(root, "d")) },
  ])("keeps a file put where the pull had just placed a $kind", async ({ path, make }) => {
    const { a, b, arm, armed } = pair((root, p) => {
      rmSync(join(root, p), { recursive: true });
      writeFileSync(join(root, p), "written on b\n");
    }, "placed");
    writeTree(a.root, { "keep.txt": "k\n" });
    await a.engine.sync();
    await b.engine.sync();
    make(a.root);
    await a.engine.sync();
    arm();
    await b.engine.sync();
    expect(armed()).toBe(false);
    const next = await b.engine.sync();
    expect(next.sent.map((c) => c.path)).toEqual([path]);
    await a.engine.sync();
    expect(read(a.root, path)).toBe("written on b\n");
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  /** a and b share `path`; once armed, b's next pull writes a save into it after its re-check passed. */
  async function sharedWithLateSave(path: string) {
    const hosts = pair((root, p) => writeFileSync(join(root, p), "saved on b late\n"), "checked");
    writeTree(hosts.a.root, { [path]: "v1\n" });
    await hosts.a.engine.sync();
    await hosts.b.engine.sync();
    return hosts;
  }

  it("keeps a save written after the re-check, right before the rename", async () => {
    const { a, b, arm, armed } = await sharedWithLateSave("x.txt");
    writeTree(a.root, { "x.txt": "v2 from a\n" });
    await a.engine.sync();
    arm();
    const report = await b.engine.sync();
    expect(armed()).toBe(false);
    expect(report.conflicts.map((c) => c.path)).toEqual(["x.txt"]);
    expect(read(b.root, report.conflicts[0]?.copy as string)).toBe("saved on b late\n");
    expect(read(b.root, "x.txt")).toBe("v2 from a\n");
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("keeps a save written after the check, right before the unlink", async () => {
    const { a, b, arm, armed } = await sharedWithLateSave("doomed.txt");
    rmSync(join(a.root, "doomed.txt"));
    await a.engine.sync();
    arm();
    await b.engine.sync();
    expect(armed()).toBe(false);
    expect(read(b.root, "doomed.txt")).toBe("saved on b late\n");
    await a.engine.sync();
    expect(read(a.root, "doomed.txt")).toBe("saved on b late\n");
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("sends a save written after the re-check, right before the pull sets the file's mode in place", async () => {
    const { a, b, arm, armed } = await sharedWithLateSave("x.txt");
    chmodSync(join(a.root, "x.txt"), 0o600);
    await a.engine.sync();
    arm();
    await b.engine.sync();
    expect(armed()).toBe(false);
    await b.engine.sync();
    await a.engine.sync();
    expect(read(a.root, "x.txt")).toBe("saved on b late\n");
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("leaves no second name of the replaced file when the rename fails (soak seed 75)", async () => {
    // After the re-check, the downloaded temporary file becomes a directory: the rename over the file fails.
    const { a, b, arm, armed } = pair((root, path) => {
      const dir = dirname(join(root, path));
      // The download's temporary file, not the second name of the file it replaces (a hard link of it).
      const temps = readdirSync(dir).filter((n) => n.startsWith(TEMP_PREFIX) && lstatSync(join(dir, n)).nlink === 1);
      for (const name of temps) {
        rmSync(join(dir, name));
        mkdirSync(join(dir, name));
      }
    }, "checked");
    writeTree(a.root, { "x.txt": "v1\n" });
    await a.engine.sync();
    await b.engine.sync();
    writeTree(a.root, { "x.txt": "v2 from a\n" });
    await a.engine.sync();
    arm();
    await b.engine.sync();
    expect(armed()).toBe(false);
    const files = readdirSync(b.root).filter((n) => n.startsWith(TEMP_PREFIX) && lstatSync(join(b.root, n)).isFile());
    expect(files).toEqual([]);
    await b.engine.sync();
    expect(read(b.root, "x.txt")).toBe("v2 from a\n");
  });

  it("removes its temporary file that a directory renamed under the pull took along (soak seed 84)", async () => {
    // After the re-check, the directory being written into is renamed: the download's rename finds no
    // directory, and its temporary file is in the renamed one.
    const { a, b, arm, armed } = pair((root) => renameSync(join(root, "d"), join(root, "moved")), "checked");
    writeTree(a.root, { "d/x.txt": "v1\n" });
    await a.engine.sync();
    await b.engine.sync();
    writeTree(a.root, { "d/x.txt": "v2 from a\n" });
    await a.engine.sync();
    arm();
    await expect(b.engine.sync()).rejects.toThrow(/ENOENT/);
    expect(armed()).toBe(false);
    await b.engine.sync();
    expect(readdirSync(join(b.root, "moved")).filter((n) => n.startsWith(TEMP_PREFIX))).toEqual([]);
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("keeps a file put at an empty path after the re-check, right before the pull writes there (soak seed 35)", async () => {
    const { a, b, arm, armed } = pair(
      (root, path) => writeFileSync(join(root, path), "made on b at that moment\n"),
      "checked",
    );
    await b.engine.sync();
    writeTree(a.root, { "new.txt": "from a\n" });
    await a.engine.sync();
    arm();
    await b.engine.sync();
    expect(armed()).toBe(false);
    await b.engine.sync();
    await a.engine.sync();
    const contents = readdirSync(b.root)
      .filter((n) => n !== ".ferry")
      .map((n) => read(b.root, n))
      .sort();
    expect(contents).toEqual(["from a\n", "made on b at that moment\n"]);
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  // b's pull refuses a's symlink at `e` (a directory made there at that moment) and keeps the change to retry.
  // b then pushes a file into that directory, after a made `e` a directory again. The stale symlink, retried
  // at b's next pull, took the directory and b's own file (which no pull brings back) to a conflict copy.
  it("does not retry a refused symlink under which it has since pushed a file (soak seed 22)", async () => {
    const { a, b, arm, armed } = pair((root, path) => {
      mkdirSync(join(root, path));
      writeFileSync(join(root, path, "f"), "written on b\n");
    }, "checked");
    writeTree(a.root, { x: "x\n" });
    await a.engine.sync();
    await b.engine.sync();
    symlinkSync("x", join(a.root, "e"));
    await a.engine.sync();
    arm();
    const refused = await b.engine.sync();
    expect(armed()).toBe(false);
    expect(refused.refused.map((r) => r.path)).toEqual(["e"]);
    rmSync(join(a.root, "e"));
    writeTree(a.root, { "e/inner": "i\n" });
    await a.engine.sync();
    // As a watcher does: only the new file is stamped and pushed; the server's `e` is a's directory now.
    b.engine.stampPaths(["e/f"]);
    await b.engine.sync({ scan: false, pull: false });
    const report = await b.engine.sync();
    await a.engine.sync();
    expect(read(a.root, "e/f")).toBe("written on b\n");
    expect(snapshot(b.root)).toEqual(snapshot(a.root));
    expect(report.conflicts).toEqual([]);
  });

  it("keeps a save made right after the pull moved the local version to a conflict copy", async () => {
    const { a, b, arm, armed } = pair(
      (root, path) => writeFileSync(join(root, path), "saved on b after the copy\n"),
      "forget",
    );
    writeTree(a.root, { "x.txt": "v1\n" });
    await a.engine.sync();
    await b.engine.sync();
    writeTree(a.root, { "x.txt": "edited on a\n" });
    await a.engine.sync();
    writeTree(b.root, { "x.txt": "edited on b\n" });
    arm();
    await b.engine.sync();
    expect(armed()).toBe(false);
    await b.engine.sync();
    await a.engine.sync();
    const contents = (root: string) =>
      readdirSync(root)
        .filter((n) => n !== ".ferry")
        .map((n) => read(root, n));
    expect(contents(b.root).sort()).toEqual(["edited on a\n", "edited on b\n", "saved on b after the copy\n"]);
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

/** The store, calling `forgot` after each record it removes. */
function forgetting(store: HostStore, forgot: (path: string) => void): HostStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === "remove") {
        return (path: string) => {
          target.remove(path);
          forgot(path);
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
