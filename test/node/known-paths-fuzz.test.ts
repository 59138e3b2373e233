/**
 * KnownPaths (the store's fingerprint rows merged with the walk by a cursor)
 * against the map it replaced, on generated trees and store contents: names
 * that sort around `/` (`a.js`, `a-b`, `a b`, U+0001), astral characters
 * (UTF-8 and UTF-16 order differ), é in NFC and NFD, long names, deep
 * nesting, names that are prefixes of each other, records of files where
 * the disk has directories and the reverse, unreadable directories, subtree
 * scans. Each take and the paths left over must equal the map's. Seeded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { KnownPaths } from "../../client/scan/known-paths.ts";
import { fingerprintRow, joinRows } from "../../client/store/fingerprint-rows.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { HostStore, PathRecord } from "../../client/store/store.ts";
import { sortPaths } from "../../protocol/cursor.ts";
import { cleanup, tempDir } from "./support/hosts.ts";
import { prng } from "./support/soak-writer.ts";

afterEach(cleanup);

const NAMES = [
  "a",
  "a.js",
  "a-b",
  "a b",
  "a!",
  "a0",
  "a\u0001",
  "\u0001",
  "ab",
  "A",
  "b",
  "é",
  "e\u0301",
  "\u{1F600}",
  "\uFF41",
  "\uFFFD",
  "x".repeat(200),
  "a".repeat(120),
];

/** The map the scanner used before KnownPaths: take is get and delete; unreadable directories drop their subtree. */
class MapReference {
  private readonly known = new Map<string, { stat: string | null; gone: boolean }>();
  constructor(records: readonly PathRecord[]) {
    for (const r of records) this.known.set(r.entry.path, { stat: r.stat, gone: r.entry.kind === "gone" });
  }
  take(path: string): string | null | undefined {
    const k = this.known.get(path);
    this.known.delete(path);
    return k?.stat;
  }
  keepUnder(dir: string): void {
    for (const path of [...this.known.keys()]) if (dir === "" || path.startsWith(`${dir}/`)) this.known.delete(path);
  }
  left(): { path: string; gone: boolean }[] {
    return sortPaths([...this.known.keys()]).map((path) => ({ path, gone: this.known.get(path)?.gone === true }));
  }
}

function record(path: string, kind: "file" | "gone", stat: string | null): PathRecord {
  const entry =
    kind === "gone"
      ? { kind, path }
      : { kind, path, mode: 0o644, mtime: 1_700_000_000_000, size: 1, chunks: [new Uint8Array(32).fill(1)] };
  return { entry, sizes: kind === "gone" ? [] : [1], stat, hostRev: 1, serverRev: 0, agreed: null } as PathRecord;
}

/** A random path of 1 to `depth` names. */
function randomPath(random: () => number, depth: number): string {
  const names: string[] = [];
  const n = 1 + Math.floor(random() * depth);
  for (let i = 0; i < n; i++) names.push(NAMES[Math.floor(random() * NAMES.length)] as string);
  return names.join("/");
}

/** A disk tree: path → is a directory; every ancestor of a path is a directory, no path is both. */
function randomTree(random: () => number): Map<string, boolean> {
  const tree = new Map<string, boolean>();
  const count = Math.floor(random() * 40);
  for (let i = 0; i < count; i++) {
    const path = random() < 0.05 ? Array.from({ length: 30 }, () => "d").join("/") : randomPath(random, 5);
    const parts = path.split("/");
    const ancestors = parts.slice(0, -1).map((_, j) => parts.slice(0, j + 1).join("/"));
    if (tree.has(path) || ancestors.some((a) => tree.get(a) === false)) continue;
    for (const a of ancestors) tree.set(a, true);
    tree.set(path, random() < 0.3);
  }
  return tree;
}

/** The walk's order: depth first, each directory's names sorted in JavaScript's order (scanner.ts). */
function walkOrder(tree: Map<string, boolean>, from: string): string[] {
  const children = new Map<string, string[]>();
  for (const path of tree.keys()) {
    const at = path.lastIndexOf("/");
    const parent = at === -1 ? "" : path.slice(0, at);
    children.set(parent, [...(children.get(parent) ?? []), path.slice(at + 1)]);
  }
  const order: string[] = [];
  const visit = (dir: string) => {
    for (const name of (children.get(dir) ?? []).sort()) {
      const path = dir === "" ? name : `${dir}/${name}`;
      order.push(path);
      if (tree.get(path)) visit(path);
    }
  };
  if (from !== "") order.push(from);
  visit(from);
  return order;
}

describe("KnownPaths", () => {
  let store: HostStore;
  afterEach(() => store?.close());

  it("takes and leaves exactly what a map of every path does, for generated trees and stores", () => {
    const random = prng(424242);
    for (let round = 0; round < 300; round++) {
      store = openStore("memory", tempDir("known"));
      const tree = randomTree(random);
      // The store: most disk paths (as files or tombstones, whatever the disk has now), and paths the disk lacks.
      const recorded = new Set<string>();
      for (const path of tree.keys()) if (random() < 0.7) recorded.add(path);
      for (let i = Math.floor(random() * 30); i > 0; i--) recorded.add(randomPath(random, 5));
      for (const path of recorded) {
        const stat = random() < 0.2 ? null : random() < 0.1 ? "" : `s${Math.floor(random() * 3)}`;
        store.put(record(path, random() < 0.25 ? "gone" : "file", stat));
      }
      // A whole-tree scan, or a watcher's scan of one directory's subtree (scanner.ts's fingerprintsAt).
      const dirs = [...tree].filter(([, isDir]) => isDir).map(([p]) => p);
      const subtree = dirs.length > 0 && random() < 0.3 ? (dirs[Math.floor(random() * dirs.length)] as string) : "";
      const self = subtree === "" ? undefined : store.get(subtree);
      const records = subtree === "" ? [...store.all()] : [...(self ? [self] : []), ...store.under(subtree)];
      const rows =
        subtree === ""
          ? store.fingerprints()
          : joinRows(records.map((r) => fingerprintRow(r.entry.path, r.entry.kind === "gone", r.stat)));
      const known = new KnownPaths(rows);
      const reference = new MapReference(records);
      expect(known.size).toBe(records.length);
      // The walk in its order, or (rarely) in any order; some directories cannot be read.
      let order = walkOrder(tree, subtree);
      if (random() < 0.2)
        order = order
          .map((p) => [random(), p] as const)
          .sort((x, y) => x[0] - y[0])
          .map(([, p]) => p);
      const unreadable: string[] = random() < 0.03 ? [""] : [];
      for (const path of order) {
        if (unreadable.some((dir) => dir === "" || path.startsWith(`${dir}/`))) continue;
        // As the scanner asks: with the walk's fingerprint, sometimes the recorded one (compared in
        // place), or one that the recorded one only starts with.
        const expected = reference.take(path);
        const pick = random();
        const now =
          typeof expected !== "string" || pick < 0.3
            ? null
            : pick < 0.6
              ? expected
              : pick < 0.8
                ? expected.slice(0, -1)
                : "s1";
        expect(known.take(path, now), `round ${round}: take ${JSON.stringify(path)}`).toEqual(expected);
        if (tree.get(path) && random() < 0.1) unreadable.push(path);
      }
      for (const dir of unreadable) {
        known.keepUnder(dir);
        reference.keepUnder(dir);
      }
      expect(known.left(), `round ${round}`).toEqual(reference.left());
      store.close();
    }
  });
});
