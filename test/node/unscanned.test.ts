/**
 * A pull that lands while local changes are on disk but not yet in the store:
 * under `sync --watch` the watcher's scan of a change can come after a pull
 * that a poke started. What the pull does around such paths must leave the
 * host able to converge with the server, never with state only one side has.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, MATRIX, newWorkspace, openHost, twoSyncedHosts } from "./support/hosts.ts";
import { pastRacyWindow, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe.each(MATRIX)(
  "a pull over changes no scan has seen, over $name with $storeKind stores",
  ({ factory, storeKind }) => {
    it("deletes the synced files under a directory the host turned into a symlink", async () => {
      const { a, b } = await twoSyncedHosts(
        { "dir/x.txt": "x\n", "dir/y.txt": "y\n", "other.txt": "o\n" },
        { factory, storeKind },
      );
      writeFileSync(join(b.root, "dir/new.txt"), "new on b\n");
      await b.engine.sync();

      // The swap is on disk, not in the store, when the pull lands dir/new.txt under `dir`.
      rmSync(join(a.root, "dir"), { recursive: true });
      symlinkSync("other.txt", join(a.root, "dir"));
      const report = await a.engine.sync({ scan: false });
      expect(report.conflicts.map((c) => c.path)).toEqual(["dir"]);
      await a.engine.sync();
      await b.engine.sync();
      expect(Object.keys(snapshot(a.root)).filter((p) => p.startsWith("dir/"))).toEqual(["dir/new.txt"]);
      expect(snapshot(b.root)).toEqual(snapshot(a.root));
    });

    it.each([
      ["turned into a symlink", (dir: string) => symlinkSync("other.txt", dir)],
      ["deleted", () => {}],
    ])("keeps what the pull writes into a directory made again after the host stamped it %s", async (_, replace) => {
      const { a, b } = await twoSyncedHosts({ "dir/x.txt": "x\n", "other.txt": "o\n" }, { factory, storeKind });
      const dir = join(a.root, "dir");
      rmSync(dir, { recursive: true });
      replace(dir);
      expect(a.engine.stampPaths(["dir"])).toBeGreaterThan(0);
      // Made again (as a writer does), and no scan has seen it when the pull lands dir/new.txt in it.
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      writeFileSync(join(b.root, "dir/new.txt"), "b's work\n");
      await b.engine.sync();

      await a.engine.sync({ scan: false });
      await b.engine.sync();
      expect(readFileSync(join(b.root, "dir/new.txt"), "utf8")).toBe("b's work\n");
      await a.engine.sync();
      await b.engine.sync();
      expect(snapshot(a.root)).toEqual(snapshot(b.root));
      expect(Object.keys(snapshot(a.root)).filter((p) => p.startsWith("dir/"))).toEqual(["dir/new.txt"]);
    });

    it("keeps a directory it pushed after the server deleted its parent, when it pulls that deletion", async () => {
      const { a, b } = await twoSyncedHosts({ "dir/x.txt": "x\n" }, { factory, storeKind });
      rmSync(join(b.root, "dir"), { recursive: true });
      await b.engine.sync();
      mkdirSync(join(a.root, "dir/sub"));
      await a.engine.sync({ pull: false });
      await a.engine.sync();
      await b.engine.sync();
      expect(snapshot(a.root)).toEqual(snapshot(b.root));
      expect(Object.keys(snapshot(a.root))).toContain("dir/sub");
    });

    it("sends as a directory one a writer made while the pull made its parent again (soak seed 70)", async () => {
      const ws = newWorkspace();
      const a = openHost(ws, { factory, storeKind });
      let made = false;
      // The moment the pull looks at `e` after making it again for `e/f/new.txt`, a writer makes `e/f` too.
      const b = openHost(ws, {
        factory,
        storeKind,
        wrapStore: (store) =>
          new Proxy(store, {
            get(target, key) {
              const value = Reflect.get(target, key, target);
              if (key !== "get") return typeof value === "function" ? value.bind(target) : value;
              return (path: string) => {
                if (path === "e" && !made && existsSync(join(b.root, "e"))) {
                  made = true;
                  mkdirSync(join(b.root, "e/f"));
                }
                return target.get(path);
              };
            },
          }),
      });
      writeTree(a.root, { "e/f/x.txt": "x\n" });
      await a.engine.sync();
      await b.engine.sync();
      // b's scan records `e` deleted; no scan sees `e/f` made again.
      rmSync(join(b.root, "e"), { recursive: true });
      expect(b.engine.stampPaths(["e"])).toBeGreaterThan(0);
      writeFileSync(join(a.root, "e/f/new.txt"), "a's work\n");
      await a.engine.sync();

      await b.engine.sync({ scan: false });
      expect(made).toBe(true);
      await a.engine.sync();
      expect(readFileSync(join(a.root, "e/f/new.txt"), "utf8")).toBe("a's work\n");
      await b.engine.sync();
      expect(snapshot(b.root)).toEqual(snapshot(a.root));
    });

    it("deletes a directory the pull made again for another host's edit in it (soak seed 61)", async () => {
      // b made `dir`: a's deletion of it must agree with b's state, or the server keeps it.
      const ws = newWorkspace();
      const a = openHost(ws, { factory, storeKind });
      const b = openHost(ws, { factory, storeKind });
      writeTree(b.root, { "dir/x.txt": "x\n", "other.txt": "o\n" });
      await b.engine.sync();
      await a.engine.sync();
      rmSync(join(a.root, "dir"), { recursive: true });
      writeFileSync(join(b.root, "dir/x.txt"), "edited on b\n");
      await b.engine.sync();
      // b's edit wins over a's deletion that no scan has seen: the pull makes `dir` again for it.
      await a.engine.sync({ scan: false });
      expect(readFileSync(join(a.root, "dir/x.txt"), "utf8")).toBe("edited on b\n");
      rmSync(join(a.root, "dir"), { recursive: true });
      const report = await a.engine.sync();
      expect(report.conflicts).toEqual([]);
      await b.engine.sync();
      expect(snapshot(b.root)).toEqual(snapshot(a.root));
      expect(Object.keys(snapshot(b.root))).toEqual(["other.txt"]);
    });

    /**
     * a stamps `dir/new` (not pushed yet), then deletes `deleted` without a
     * scan; b deletes `dir`. The pull of that deletion must not leave a record
     * of `dir/new` to push under the deleted `dir`: b would make a `dir` for
     * it, which nothing then removes.
     */
    async function stampedThenDeleted(deleted: string): Promise<void> {
      const ws = newWorkspace();
      const a = openHost(ws, { factory, storeKind });
      const b = openHost(ws, { factory, storeKind });
      writeTree(a.root, { "dir/k.txt": "k\n" });
      // Old enough for its fingerprint to be trusted (stat-key.ts): the pull can then remove it unread.
      // Its mtime set back, and its ctime, which no utimes ages, waited out.
      utimesSync(join(a.root, "dir/k.txt"), 1e9, 1e9);
      await pastRacyWindow();
      await a.engine.sync();
      await b.engine.sync();
      mkdirSync(join(a.root, "dir/new"));
      expect(a.engine.stampPaths(["dir/new"])).toBe(1);
      rmSync(join(a.root, deleted), { recursive: true });
      rmSync(join(b.root, "dir"), { recursive: true });
      await b.engine.sync();

      await a.engine.sync({ scan: false });
      await b.engine.sync();
      await a.engine.sync();
      await b.engine.sync();
      expect(snapshot(a.root)).toEqual({});
      expect(snapshot(b.root)).toEqual({});
    }

    it("does not push a directory it stamped and deleted under a directory the server removed", () =>
      stampedThenDeleted("dir/new"));

    it("does not push what it stamped under a directory it deleted, when the server deletes that directory too", () =>
      stampedThenDeleted("dir"));
  },
);
