/**
 * Where a split walk is cut (client/scan/walk-cut.ts): the walk's order is
 * depth first with names sorted, which differs from string order where a
 * name is a prefix of another (`a/x` and `a.js`). On generated paths with
 * names that sort around `/`, each path (and its fingerprint row) must fall
 * on the side of the cut the walk's order puts it, the main thread's
 * listings must stop at the cut, and the worker's stack must start right
 * after it. Seeded.
 */
import { describe, expect, it } from "vitest";
import { cutChain, namesBeforeCut, splitAtCut, stackAfterCut, walksBefore } from "../../client/scan/walk-cut.ts";
import { fingerprintRow } from "../../client/store/fingerprint-rows.ts";
import { prng } from "./support/soak-writer.ts";

const NAMES = ["a", "a.js", "a-b", "a b", "a!", "a0", "a\u0001", "\u0001", "ab", "b", "é", "\u{1F600}", "\uFF41"];

/** The walk's order: name by name, each directory's names in JavaScript's sort order, a directory before what is under it. */
function walkOrder(x: string, y: string): number {
  const xs = x.split("/");
  const ys = y.split("/");
  for (let i = 0; i < Math.min(xs.length, ys.length); i++) {
    const a = xs[i] as string;
    const b = ys[i] as string;
    if (a !== b) return a < b ? -1 : 1;
  }
  return xs.length - ys.length;
}

function randomPath(random: () => number): string {
  const n = 1 + Math.floor(random() * 4);
  return Array.from({ length: n }, () => NAMES[Math.floor(random() * NAMES.length)] as string).join("/");
}

describe("walk cut", () => {
  it("puts each path and its row on the side of the cut the walk reaches it", () => {
    const random = prng(4242);
    for (let i = 0; i < 5000; i++) {
      const path = randomPath(random);
      const cut = random() < 0.1 ? path : randomPath(random);
      const before = walkOrder(path, cut) < 0;
      expect(walksBefore(path, cut), `${JSON.stringify(path)} against ${JSON.stringify(cut)}`).toBe(before);
      expect(walksBefore(fingerprintRow(path, false, "f1:2:3:4"), cut)).toBe(before);
      expect(walksBefore(fingerprintRow(path, true, null), cut)).toBe(before);
    }
  });

  it("splits a walk into what the main thread lists up to the cut and what the worker lists after it", () => {
    const random = prng(777);
    for (let round = 0; round < 200; round++) {
      // A tree: every path and its ancestors, in the walk's order.
      const paths = new Set<string>();
      for (let i = 1 + Math.floor(random() * 40); i > 0; i--) {
        const parts = randomPath(random).split("/");
        for (let j = 1; j <= parts.length; j++) paths.add(parts.slice(0, j).join("/"));
      }
      const walk = [...paths].sort(walkOrder);
      const listing = (dir: string) =>
        walk
          .filter((p) =>
            dir === "" ? !p.includes("/") : p.startsWith(`${dir}/`) && !p.slice(dir.length + 1).includes("/"),
          )
          .map((p) => p.slice(dir === "" ? 0 : dir.length + 1))
          .sort();
      const cut = walk[Math.floor(random() * walk.length)] as string;
      // The main thread's walk: each listing stops at the cut.
      const chain = cutChain(cut);
      const mine: string[] = [];
      const visit = (dir: string) => {
        const names = listing(dir);
        for (const name of names.slice(0, namesBeforeCut(dir, names, chain))) {
          const p = dir === "" ? name : `${dir}/${name}`;
          mine.push(p);
          visit(p);
        }
      };
      visit("");
      // The worker's walk: from its stack.
      const theirs: string[] = [];
      const stack = stackAfterCut(cut, (dir) => listing(dir));
      while (stack.length > 0) {
        const top = stack[stack.length - 1] as (typeof stack)[number];
        if (top.next === top.names.length) {
          stack.pop();
          continue;
        }
        const name = top.names[top.next++] as string;
        const p = top.dir === "" ? name : `${top.dir}/${name}`;
        theirs.push(p);
        stack.push({ dir: p, names: listing(p), next: 0 });
      }
      const at = walk.indexOf(cut);
      expect(mine, `round ${round}, cut ${JSON.stringify(cut)}`).toEqual(walk.slice(0, at));
      expect(theirs, `round ${round}, cut ${JSON.stringify(cut)}`).toEqual(walk.slice(at));
      const rows = [...paths].sort().map((p) => fingerprintRow(p, false, null));
      const [before, after] = splitAtCut(rows, cut);
      expect(new Set(before.map((r) => r.slice(0, r.indexOf("\0"))))).toEqual(new Set(mine));
      expect(new Set(after.map((r) => r.slice(0, r.indexOf("\0"))))).toEqual(new Set(theirs));
    }
  });
});
