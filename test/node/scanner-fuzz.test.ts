/**
 * The scanner (its walk merged with the store's rows, known-paths.ts) on
 * generated trees changed at random between two scans: files added,
 * removed, rewritten, replaced by directories and back, whole subtrees
 * gone; names that sort around `/`, astral characters, a name in NFD (which
 * is skipped), long names, deep nesting, names that are prefixes of each
 * other. The changes found (by a scan of one subtree, then of the whole
 * tree) must be exactly what comparing the two trees says, a third scan
 * must find nothing, and one that ignores a name must drop exactly the
 * records at or under it. Seeded.
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stampScan } from "../../client/engine/stamp.ts";
import { IgnoreRules } from "../../client/scan/ignore-rules.ts";
import { Scanner, type ScanResult } from "../../client/scan/scanner.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { HostStore } from "../../client/store/store.ts";
import { sortPaths } from "../../protocol/cursor.ts";
import { cleanup, tempDir } from "./support/hosts.ts";
import { prng } from "./support/soak-writer.ts";

afterEach(cleanup);

const NAMES = ["a", "a.js", "a-b", "a b", "a!", "a\u0001", "ab", "b", "é", "\u{1F600}", "\uFF41", "x".repeat(200)];
/** é in NFD: the scanner skips it (paths are NFC), with everything under it. */
const NFD = "e\u0301";

/** A tree: path → its content, or null for a directory; every ancestor is a directory. */
type Tree = Map<string, string | null>;

function randomPath(random: () => number): string {
  const n = random() < 0.05 ? 12 : 1 + Math.floor(random() * 4);
  const names = Array.from({ length: n }, () =>
    random() < 0.03 ? NFD : (NAMES[Math.floor(random() * NAMES.length)] as string),
  );
  return names.join("/");
}

function ancestorsOf(path: string): string[] {
  const parts = path.split("/");
  return parts.slice(0, -1).map((_, j) => parts.slice(0, j + 1).join("/"));
}

/** Adds `path` (a file, or a directory when content is null), making way for it: what is in the way goes. */
function place(tree: Tree, path: string, content: string | null): void {
  for (const a of ancestorsOf(path)) {
    if (tree.get(a) !== null && tree.has(a)) tree.delete(a);
    tree.set(a, null);
  }
  if (tree.get(path) === null && content !== null) removeTree(tree, path);
  tree.set(path, content);
}

function removeTree(tree: Tree, path: string): void {
  for (const p of [...tree.keys()]) if (p === path || p.startsWith(`${path}/`)) tree.delete(p);
}

/** Makes the disk under `root` hold exactly `tree`, every entry with one old mtime (trusted, and unchanged when rewritten). */
function writeDisk(root: string, tree: Tree): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root);
  const paths = [...tree.keys()].sort((x, y) => x.split("/").length - y.split("/").length);
  for (const p of paths) {
    const content = tree.get(p);
    if (content === null) mkdirSync(join(root, p), { recursive: true });
    else writeFileSync(join(root, p), content as string);
  }
  const past = 1_700_000_000;
  for (const p of paths.reverse()) utimesSync(join(root, p), past, past);
}

/** The paths the scanner can sync: none with an NFD name in it. */
const syncable = (tree: Tree) => new Map([...tree].filter(([p]) => !p.includes(NFD)));

describe("scanner on generated trees", () => {
  let store: HostStore | undefined;
  afterEach(() => store?.close());

  it("finds exactly the changes between two trees, then nothing", () => {
    const random = prng(90210);
    let dropped = 0;
    for (let round = 0; round < 25; round++) {
      const root = join(tempDir("scanfuzz"), "root");
      const before: Tree = new Map();
      for (let i = Math.floor(random() * 30); i > 0; i--)
        place(before, randomPath(random), random() < 0.2 ? null : `v${i}`);
      writeDisk(root, before);
      const opened = openStore("memory", root);
      store = opened;
      const scan = () => {
        const result = new Scanner(root, opened, IgnoreRules.load(root, [])).scan();
        stampScan(opened, result);
        return result;
      };
      scan();
      // Changes: new files and directories, rewrites (another size), removals, a file where a directory was and back.
      const after: Tree = new Map(before);
      for (let i = Math.floor(random() * 10); i > 0; i--) {
        const paths = [...after.keys()];
        const path =
          paths.length > 0 && random() < 0.6
            ? (paths[Math.floor(random() * paths.length)] as string)
            : randomPath(random);
        const op = random();
        if (op < 0.3) removeTree(after, path);
        else if (op < 0.5) place(after, path, `changed ${round} ${i} ${"z".repeat(i)}`);
        else if (op < 0.7) place(after, path, null);
        else place(after, `${path}/${NAMES[Math.floor(random() * NAMES.length)]}`, "under");
      }
      writeDisk(root, after);
      const was = syncable(before);
      const now = syncable(after);
      const expected = new Set<string>();
      for (const [p, content] of now) {
        if (!was.has(p) || (was.get(p) === null) !== (content === null) || (content !== null && was.get(p) !== content))
          expected.add(`${content === null ? "dir" : "file"} ${p}`);
      }
      for (const p of was.keys()) if (!now.has(p)) expected.add(`gone ${p}`);
      const kindAndPath = (r: ScanResult) => r.changes.map((c) => `${c.entry.kind} ${c.entry.path}`);
      if (random() < 0.5) {
        // A watcher's scan of one subtree first (a path that was, is, or never was): exactly the changes in it.
        const paths = [...new Set([...before.keys(), ...after.keys()])];
        const at =
          paths.length > 0 && random() < 0.8
            ? (paths[Math.floor(random() * paths.length)] as string)
            : randomPath(random);
        const inside = [...expected].filter((c) => {
          const p = c.slice(c.indexOf(" ") + 1);
          return p === at || p.startsWith(`${at}/`);
        });
        const partial = new Scanner(root, opened, IgnoreRules.load(root, [])).scan(at);
        stampScan(opened, partial);
        expect(new Set(kindAndPath(partial)), `round ${round}: scan of ${JSON.stringify(at)}`).toEqual(new Set(inside));
        for (const c of inside) expected.delete(c);
      }
      const result = scan();
      const found = kindAndPath(result);
      expect(new Set(found), `round ${round}`).toEqual(expected);
      expect(found).toHaveLength(expected.size);
      expect(result.dropped).toEqual([]);
      expect(scan().changes, `round ${round}: a rescan`).toEqual([]);
      // Ignoring a name: every record at or under it (tombstones too) is dropped, in path order, and nothing is deleted.
      const ignored = NAMES[Math.floor(random() * 4)] as string;
      const recorded = [...opened.all()].map((r) => r.entry.path);
      const withIgnored = new Scanner(root, opened, IgnoreRules.load(root, [ignored])).scan();
      expect(withIgnored.changes, `round ${round}: ignoring ${ignored}`).toEqual([]);
      expect(withIgnored.dropped, `round ${round}: ignoring ${ignored}`).toEqual(
        sortPaths(recorded.filter((p) => p.split("/").includes(ignored))),
      );
      dropped += withIgnored.dropped.length;
      opened.close();
      store = undefined;
    }
    // The generated trees do hold the ignored names.
    expect(dropped).toBeGreaterThan(25);
  });
});
