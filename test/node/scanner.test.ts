import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stampScan } from "../../client/engine/stamp.ts";
import { IgnoreRules, matchesOnName } from "../../client/scan/ignore-rules.ts";
import { Scanner } from "../../client/scan/scanner.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { HostStore } from "../../client/store/store.ts";
import { pathProblem, walkedPathProblem } from "../../protocol/paths.ts";
import { cleanup, tempDir } from "./support/hosts.ts";
import { pastRacyWindow, writeTree } from "./support/tree.ts";

afterEach(cleanup);

/** Ages every given path's mtime by an hour (its ctime stays recent: a test that needs it trusted waits, pastRacyWindow). */
function age(root: string, paths: string[]): void {
  const past = Date.now() / 1000 - 3600;
  for (const p of paths) utimesSync(join(root, p), past, past);
}

function setup(files: Record<string, string>, patterns: string[] = []) {
  const root = tempDir("scan");
  writeTree(root, files);
  age(root, Object.keys(files));
  const store: HostStore = openStore("memory", root);
  const scanner = () => new Scanner(root, store, IgnoreRules.load(root, patterns));
  const scan = () => {
    const result = scanner().scan();
    stampScan(store, result);
    return result;
  };
  return { root, store, scan };
}

const paths = (r: { changes: { entry: { path: string; kind: string } }[] }) =>
  r.changes.map((c) => `${c.entry.kind} ${c.entry.path}`);

describe("scanner", () => {
  it("never reads a file whose size, mtime, inode, mode and ctime are unchanged", async () => {
    const { scan } = setup({ "a.txt": "a", "d/b.txt": "b" });
    await pastRacyWindow();
    const first = scan();
    expect(first.hashedFiles).toBe(2);
    const second = scan();
    expect(second.hashedFiles).toBe(0);
    expect(second.changes).toEqual([]);
  });

  it("stamps new, changed, mode-changed, deleted and type-changed paths with new host revs", () => {
    const { root, store, scan } = setup({
      "keep.txt": "k",
      "edit.txt": "e1",
      "mode.txt": "m",
      "del.txt": "d",
      swap: "s",
    });
    scan();
    const before = store.position().hostRev;
    writeFileSync(join(root, "edit.txt"), "e2");
    chmodSync(join(root, "mode.txt"), 0o755);
    rmSync(join(root, "del.txt"));
    rmSync(join(root, "swap"));
    mkdirSync(join(root, "swap"));
    writeFileSync(join(root, "new.txt"), "n");
    const result = scan();
    expect(paths(result).sort()).toEqual([
      "dir swap",
      "file edit.txt",
      "file mode.txt",
      "file new.txt",
      "gone del.txt",
    ]);
    const revs = result.changes.map((c) => store.get(c.entry.path)?.hostRev);
    expect(new Set(revs).size).toBe(5);
    for (const rev of revs) expect(rev).toBeGreaterThan(before);
    expect(store.get("keep.txt")?.hostRev).toBeLessThanOrEqual(before);
  });

  it("does not stamp a file whose content and mtime came back the same", () => {
    const { root, scan } = setup({ "same.txt": "same" });
    scan();
    const ms = Number(statSync(join(root, "same.txt"), { bigint: true }).mtimeNs / 1_000_000n);
    writeFileSync(join(root, "same.txt"), "same");
    // The middle of the millisecond: a Date would land just below it (client/scan/stat-key.ts utimeSeconds).
    utimesSync(join(root, "same.txt"), (ms + 0.5) / 1000, (ms + 0.5) / 1000);
    const result = scan();
    expect(result.changes).toEqual([]);
    expect(result.refreshed.map((r) => r.path)).toEqual(["same.txt"]);
  });

  it("stamps a file whose mtime alone changed: mtime is part of a file's state", () => {
    const { root, scan } = setup({ "touched.txt": "same" });
    scan();
    utimesSync(join(root, "touched.txt"), 1_600_000_000, 1_600_000_000);
    expect(paths(scan())).toEqual(["file touched.txt"]);
  });

  it("reads a recently modified file again next time (racily clean)", () => {
    const { root, scan } = setup({});
    writeFileSync(join(root, "fresh.txt"), "1");
    expect(scan().hashedFiles).toBe(1);
    writeFileSync(join(root, "fresh.txt"), "2"); // same size, possibly the same coarse mtime
    const again = scan();
    expect(again.hashedFiles).toBe(1);
    expect(paths(again)).toEqual(["file fresh.txt"]);
  });

  it("keeps symlinks as symlinks and never follows them", () => {
    const { root, scan } = setup({ "real/x.txt": "x" });
    const outside = tempDir("outside");
    writeTree(outside, { "secret.txt": "do not sync" });
    symlinkSync(outside, join(root, "out"));
    symlinkSync("real", join(root, "in"));
    const result = scan();
    const entries = Object.fromEntries(result.changes.map((c) => [c.entry.path, c.entry]));
    expect(entries.out).toEqual({ kind: "symlink", path: "out", target: outside });
    expect(entries.in).toEqual({ kind: "symlink", path: "in", target: "real" });
    expect(Object.keys(entries).filter((p) => p.startsWith("out/") || p.startsWith("in/"))).toEqual([]);
  });

  it("removes an applier's temporary file left for an hour, and never syncs one", () => {
    const root = tempDir("scan");
    writeTree(root, { "d/.ferry-tmp-old": "left by a killed pull", "d/.ferry-tmp-new": "being written" });
    const past = Date.now() / 1000 - 7200;
    utimesSync(join(root, "d/.ferry-tmp-old"), past, past);
    const store = openStore("memory", root);
    const result = new Scanner(root, store, new IgnoreRules([]), true).scan();
    expect(paths(result)).toEqual(["dir d"]);
    expect(readdirSync(join(root, "d"))).toEqual([".ferry-tmp-new"]);
  });

  it("lists deleted paths in path order, by their UTF-8 bytes", () => {
    const { root, scan } = setup({ "b\u{1F600}": "x", "b\uFFFA": "y", a: "z", "c/d": "w" });
    scan();
    for (const name of ["b\u{1F600}", "b\uFFFA", "a", "c"]) rmSync(join(root, name), { recursive: true });
    expect(paths(scan())).toEqual(["gone a", "gone b\uFFFA", "gone b\u{1F600}", "gone c", "gone c/d"]);
  });

  it("finds every recorded path where the walk's order and the store's differ", async () => {
    // Path order puts `a.js` and `a-b` between `a` and `a/x`, and U+FFFA before an astral character
    // in UTF-8 but after it in JavaScript; the walk takes each directory's subtree whole.
    const names = ["a/x", "a/y.js", "a.js", "a-b/y", "a b", "a\u0001b", "ab", "\uFFFA/f", "\u{1F600}/f", "é/f", "z"];
    const { root, store, scan } = setup(Object.fromEntries(names.map((n) => [n, n])));
    await pastRacyWindow();
    expect(scan().changes).toHaveLength(names.length + 5);
    const again = scan();
    expect([again.changes, again.hashedFiles]).toEqual([[], 0]);
    for (const name of ["a.js", "a/x", "\u{1F600}/f", "ab"]) rmSync(join(root, name));
    writeFileSync(join(root, "a-b/y"), "changed");
    expect(paths(scan())).toEqual(["file a-b/y", "gone a.js", "gone a/x", "gone ab", "gone \u{1F600}/f"]);
    writeFileSync(join(root, "a/y.js"), "changed");
    expect(paths(new Scanner(root, store, new IgnoreRules([])).scan("a"))).toEqual(["file a/y.js"]);
  });

  it("checks a walked name as it would check the whole path", () => {
    const long = (n: number, c = "a") => c.repeat(n);
    // Valid parents (the walk enters no other): short, non-ASCII, around 1,365 characters, and 4,095 bytes.
    const segments = (n: number, last: string) => [...Array.from({ length: n }, () => long(255)), last].join("/");
    const parents = ["", "a", "dir/sub", "é/ü", segments(5, long(78)), segments(5, long(80)), segments(15, long(255))];
    parents.push(segments(4, long(85, "é")));
    const names = ["x", "plain.txt", "a b", "a\u0001b", "#!~", ".", "..", "", "a/b", "a\0b", "é", "cafe\u0301"];
    names.push("\uFFFD", "\uD800", "\u{1F600}", long(255), long(256), long(85, "é"), long(128, "é"), long(3));
    for (const parent of parents) {
      for (const name of names) {
        const path = parent === "" ? name : `${parent}/${name}`;
        expect([path.length, name, walkedPathProblem(path, name)]).toEqual([path.length, name, pathProblem(path)]);
      }
    }
  });

  it("skips names that are not valid workspace paths, and says why", () => {
    const { root, scan } = setup({ "ok.txt": "ok" });
    writeFileSync(join(root, "cafe\u0301.txt"), "not NFC");
    const result = scan();
    expect(paths(result)).toEqual(["file ok.txt"]);
    expect(result.skipped).toEqual([{ path: "cafe\u0301.txt", reason: "path is not in NFC" }]);
  });
});

describe("ignore rules", () => {
  it("applies .ferryignore, --ignore patterns, and always .ferry/", () => {
    const { scan } = setup(
      {
        ".ferryignore": "*.log\nbuild/\n!keep.log\n",
        "app.log": "l",
        "keep.log": "k",
        "build/out.js": "o",
        "src/build": "a file named build is kept",
        "node_modules/x/index.js": "x",
        "src/main.ts": "m",
      },
      ["node_modules"],
    );
    const result = scan();
    expect(paths(result).sort()).toEqual([
      "dir src",
      "file .ferryignore",
      "file keep.log",
      "file src/build",
      "file src/main.ts",
    ]);
  });

  it("reads a .ferryignore in every directory, relative to it, the nearest one deciding", () => {
    const { root, scan } = setup({
      ".ferryignore": "*.log\n/top.txt\n",
      "top.txt": "ignored: anchored to the root",
      "sub/top.txt": "kept: the root's /top.txt is not here",
      "sub/.ferryignore": "!keep.log\n/out/\n*.tmp\n",
      "sub/keep.log": "kept: sub's negation overrides the root's *.log",
      "sub/x.log": "ignored by the root's *.log",
      "sub/a.tmp": "ignored by sub",
      "a.tmp": "kept: sub's rules are sub's",
      "sub/out/o.txt": "ignored: /out/ anchored to sub",
      "sub/deep/out/o.txt": "kept: not sub/out",
      "sub/deep/.ferryignore": "!*.tmp\n",
      "sub/deep/b.tmp": "kept: deeper negation",
    });
    expect(
      paths(scan())
        .filter((p) => p.startsWith("file"))
        .sort(),
    ).toEqual([
      "file .ferryignore",
      "file a.tmp",
      "file sub/.ferryignore",
      "file sub/deep/.ferryignore",
      "file sub/deep/b.tmp",
      "file sub/deep/out/o.txt",
      "file sub/keep.log",
      "file sub/top.txt",
    ]);
    // A path asked about alone (a pull, a watcher) is judged as the walk judged it.
    const rules = IgnoreRules.load(root);
    for (const [path, ignored] of [
      ["sub/out/o.txt", true],
      ["sub/deep/out/o.txt", false],
      ["sub/deep/b.tmp", false],
      ["sub/a.tmp", true],
      ["sub/keep.log", false],
      ["new/dir/z.log", true],
    ] as const) {
      expect([path, rules.ignoresPathOrAncestor(path, false)]).toEqual([path, ignored]);
    }
  });

  it("reads a changed .ferryignore again at the next walk, and says the rules moved", () => {
    const { root, scan } = setup({ "a.log": "a", "sub/b.log": "b" });
    const rules = IgnoreRules.load(root);
    expect(rules.ignoresPathOrAncestor("sub/b.log", false)).toBe(false);
    let told = 0;
    rules.onChange(() => told++);
    writeFileSync(join(root, "sub/.ferryignore"), "*.log\n");
    rules.reload("sub");
    expect([rules.ignoresPathOrAncestor("sub/b.log", false), rules.ignoresPathOrAncestor("a.log", false)]).toEqual([
      true,
      false,
    ]);
    expect([told, rules.generation]).toEqual([1, 1]);
    rules.reload("sub");
    expect(told).toBe(1);
    expect(paths(scan()).sort()).toEqual(["dir sub", "file a.log", "file sub/.ferryignore"]);
  });

  it("never lets a rule take back .ferry or the applier's temporary files", () => {
    const rules = new IgnoreRules(["!.ferry", "!.ferry-tmp-*"]);
    expect(rules.ignoresPathOrAncestor(".ferry/store.db", false)).toBe(true);
    expect(rules.ignoresPathOrAncestor("a/.ferry-tmp-1", false)).toBe(true);
  });

  it("forgets a synced path that becomes ignored instead of deleting it", () => {
    const root = tempDir("scan");
    writeTree(root, { "cache/a": "a", "src/b": "b" });
    const store = openStore("memory", root);
    stampScan(store, new Scanner(root, store, new IgnoreRules([])).scan());
    const result = new Scanner(root, store, new IgnoreRules(["cache/"])).scan();
    expect(result.changes).toEqual([]);
    expect(result.dropped.sort()).toEqual(["cache", "cache/a"]);
  });

  it("keeps patterns with a slash to their place in the tree, with or without name-only rules beside them", () => {
    const { scan } = setup(
      {
        "src/gen/a.js": "ignored by src/gen",
        "lib/gen/b.js": "kept: src/gen names a path, not a name",
        "x.log": "ignored by *.log",
        "keep/y.log": "kept by !keep/y.log",
        "other/y.log": "ignored by *.log",
      },
      ["src/gen", "*.log", "!keep/y.log"],
    );
    expect(paths(scan()).sort()).toEqual([
      "dir keep",
      "dir lib",
      "dir lib/gen",
      "dir other",
      "dir src",
      "file keep/y.log",
      "file lib/gen/b.js",
    ]);
  });

  it("answers a walked name as matching its whole path would", () => {
    const patterns = [
      ["node_modules", "*.log", "!keep.log", "build/", "?at", "\\#x", "dist"],
      ["src/gen", "*.tmp", "!a/b.tmp"],
      ["/top", "deep/**/x", "**/cache", "c[ab]t", "sub/"],
      // Names only (answered without the library), and none at all (the rules every root has).
      ["node_modules", "dist/", ".git", "# a comment", "", "@scope", "a+b", "x.log"],
      [],
    ];
    const entries: [string, boolean][] = [];
    for (const dir of ["", "a", "a/b", "src", "deep/er", "top"]) {
      for (const name of [
        "node_modules",
        "x.log",
        "keep.log",
        "build",
        "cat",
        "bat",
        "#x",
        "dist",
        "gen",
        "b.tmp",
        "top",
        "x",
        "cache",
        "sub",
        "plain.ts",
        ".ferry",
        ".ferry-tmp-1",
        ".git",
        "@scope",
        "a+b",
      ]) {
        for (const isDir of [false, true]) entries.push([dir === "" ? name : `${dir}/${name}`, isDir]);
      }
    }
    for (const set of patterns) {
      const walked = new IgnoreRules(set);
      for (const [rel, isDir] of entries) {
        const parent = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : null;
        // The walk never asks about a path under an ignored directory.
        if (parent !== null && new IgnoreRules(set).ignoresPathOrAncestor(parent, true)) continue;
        const name = rel.slice(rel.lastIndexOf("/") + 1);
        expect([set, rel, isDir, walked.ignoresEntry(rel, name, isDir)]).toEqual([
          set,
          rel,
          isDir,
          new IgnoreRules(set).ignores(rel, isDir),
        ]);
      }
    }
  });

  it("tells patterns that match a name alone from those that match a path", () => {
    for (const line of ["node_modules", "*.log", "!keep.log", "build/", "", "# a/comment", "\\!x", "  spaced  "]) {
      expect([line, matchesOnName(line)]).toEqual([line, true]);
    }
    for (const line of ["/top", "a/b", "!a/b", "**/x", "a**b", "c[ab]t", "/", "!", "x//"]) {
      expect([line, matchesOnName(line)]).toEqual([line, false]);
    }
  });

  it("matches dir-only patterns only on directories", () => {
    const rules = new IgnoreRules(["out/"]);
    expect(rules.ignores("out", true)).toBe(true);
    expect(rules.ignores("out", false)).toBe(false);
    expect(rules.ignoresPathOrAncestor("out/deep/file.txt", false)).toBe(true);
    expect(rules.ignoresPathOrAncestor(".ferry/store.db", false)).toBe(true);
    expect(rules.ignoresPathOrAncestor("sub/.ferry", false)).toBe(true);
  });
});
