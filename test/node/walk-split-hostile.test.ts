/**
 * A split walk (client/scan/split-walk.ts) against one thread, on a tree
 * changed in hostile ways since the store recorded it: a directory on the
 * cut's path replaced by a file or by a symlink to a directory, a subtree
 * deleted, most of the tree gone, a directory newly ignored, names that sort
 * differently in walk order and string order, special files and applier
 * temporaries. At every cut the store's rows allow, and with a worker that
 * cannot do its part (its code missing, throwing, without walkPart), the
 * scan must find exactly what the one-thread scan finds.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stampScan } from "../../client/engine/stamp.ts";
import { IgnoreRules } from "../../client/scan/ignore-rules.ts";
import { Scanner, type ScanResult } from "../../client/scan/scanner.ts";
import type { SplitOutcome } from "../../client/scan/split-walk.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { HostStore } from "../../client/store/store.ts";
import { cleanup, tempDir } from "./support/hosts.ts";
import { WALK_WORKER } from "./support/walk-worker.ts";

afterEach(cleanup);

/** Names around the cut: prefixes of each other, and characters that sort below and above `/`. */
const NAMES = ["a", "a b", "a-b", "a.js", "a\u0001", "ab", "é", "\u{1F600}", "\uFF41"];

function file(root: string, path: string, content: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
  utimesSync(join(root, path), 1_700_000_000, 1_700_000_000);
}

/** The tree the store records: every name at the top, some again below, with files under each. */
function recordedTree(root: string): void {
  for (const a of NAMES) {
    file(root, `${a}/f`, `top ${a}`);
    if (["a", "a.js", "a\u0001"].includes(a)) for (const b of NAMES.slice(0, 4)) file(root, `${a}/${b}/g`, `${a} ${b}`);
  }
  for (let i = 0; i < 3; i++) file(root, `gone/d${i}/h`, `gone ${i}`);
  file(root, "build/out.js", "built");
  file(root, "dirlink/x", "a directory that becomes a symlink");
}

/** The changes since: on both sides of any cut. */
function hostileChanges(root: string): void {
  // A directory on many cuts' path replaced by a file, another by a symlink to a directory.
  rmSync(join(root, "a.js"), { recursive: true });
  file(root, "a.js", "now a file");
  rmSync(join(root, "dirlink"), { recursive: true });
  symlinkSync("a", join(root, "dirlink"));
  // A subtree deleted, a file edited, files added beside and under the cut's names.
  rmSync(join(root, "gone"), { recursive: true });
  file(root, "a b/f", "edited, longer than before");
  file(root, "a/a.js/new", "new under a prefix");
  file(root, "a\u0001/new", "new");
  file(root, "\u{1F600}/\u{1F600}", "astral");
  // A directory newly ignored, an applier's temporary, a special file.
  file(root, ".ferryignore", "build/\n");
  file(root, "ab/.ferry-tmp-123-x", "partial");
  execFileSync("mkfifo", [join(root, "ab/fifo")]);
}

type Normal = Record<string, unknown>;

/** A scan's result with the skipped paths as a set (the two threads report them in another order). */
function normal(r: ScanResult): Normal {
  return {
    changes: r.changes,
    refreshed: r.refreshed,
    dropped: r.dropped,
    skipped: [...r.skipped].map((s) => `${s.path}: ${s.reason}`).sort(),
    seen: r.seen,
  };
}

describe("a split walk on a hostile tree", () => {
  let store: HostStore | undefined;
  afterEach(() => store?.close());

  function setUp(change: (root: string) => void) {
    const root = join(tempDir("walk-hostile"), "root");
    mkdirSync(root);
    recordedTree(root);
    const opened = openStore("memory", root);
    store = opened;
    stampScan(opened, new Scanner(root, opened, IgnoreRules.load(root)).scan());
    change(root);
    const rows = opened.fingerprints().length;
    const scan = (script: string | null, share = 0.5, outcomes: SplitOutcome[] = []) =>
      normal(
        new Scanner(
          root,
          opened,
          IgnoreRules.load(root),
          false,
          script === null ? null : { script, minPaths: 1, share },
        ).scan(null, { onSplit: (o) => outcomes.push(o) }),
      );
    return { root, rows, scan, store: opened };
  }

  it("finds at every cut exactly what one thread finds", () => {
    const { rows, scan } = setUp(hostileChanges);
    const one = scan(null);
    expect((one.changes as unknown[]).length).toBeGreaterThan(15);
    const outcomes: SplitOutcome[] = [];
    for (let i = 0; i < rows; i++) {
      const split = scan(WALK_WORKER, (i + 0.5) / rows, outcomes);
      expect(split, `cut ${JSON.stringify(outcomes.at(-1)?.cut)}`).toEqual(one);
    }
    expect(outcomes.filter((o) => o.error !== null)).toEqual([]);
    expect(new Set(outcomes.map((o) => o.cut)).size).toBe(rows);
  });

  it("finds the same when the scan pauses, and after a scan abandoned mid-walk", async () => {
    const { root, rows, scan, store: opened } = setUp(hostileChanges);
    const one = scan(null);
    const scanner = (share: number) =>
      new Scanner(root, opened, IgnoreRules.load(root), false, { script: WALK_WORKER, minPaths: 1, share });
    for (let i = 0; i < rows; i += 5) {
      // The engine's scan, giving way at every step it offers.
      const paused = await scanner((i + 0.5) / rows).scanPausing(() => Promise.resolve(), {});
      expect(normal(paused), `cut ${i}`).toEqual(one);
      // A wait that fails ends the scan where it stands; its worker is left to finish alone.
      let steps = 0;
      await expect(
        scanner((i + 0.5) / rows).scanPausing(() => (++steps === 3 ? Promise.reject(new Error("lost")) : null), {}),
      ).rejects.toThrow("lost");
    }
    expect(scan(WALK_WORKER, 0.5)).toEqual(one);
  });

  it("finds every deletion when most of the tree is gone", () => {
    const { root, rows, scan } = setUp((r) => {
      for (const a of NAMES.slice(1)) rmSync(join(r, a), { recursive: true });
      rmSync(join(r, "gone"), { recursive: true });
    });
    const one = scan(null);
    expect((one.changes as unknown[]).length).toBeGreaterThan(25);
    for (let i = 0; i < rows; i += 4) expect(scan(WALK_WORKER, (i + 0.5) / rows), `cut ${i}`).toEqual(one);
    // Nothing left at all.
    rmSync(root, { recursive: true });
    mkdirSync(root);
    const none = scan(null);
    for (let i = 0; i < rows; i += 9) expect(scan(WALK_WORKER, (i + 0.5) / rows), `cut ${i}`).toEqual(none);
  });

  it("walks the worker's part itself, and says why, when the worker cannot", { timeout: 60_000 }, () => {
    const { scan } = setUp(hostileChanges);
    const one = scan(null);
    const dir = tempDir("walk-hostile-scripts");
    const scripts = {
      missing: join(dir, "missing.cjs"),
      throws: join(dir, "throws.cjs"),
      empty: join(dir, "empty.cjs"),
      walkThrows: join(dir, "walk-throws.cjs"),
      // A thread that ends without answering (as one killed for memory would): not a wait of minutes.
      walkExits: join(dir, "walk-exits.cjs"),
    };
    writeFileSync(scripts.throws, `throw new Error("cannot load");`);
    writeFileSync(scripts.empty, `module.exports = {};`);
    writeFileSync(scripts.walkThrows, `exports.walkPart = () => { throw new Error("cannot walk"); };`);
    writeFileSync(scripts.walkExits, `exports.walkPart = () => process.exit(0);`);
    for (const [name, script] of Object.entries(scripts)) {
      for (const share of [0.1, 0.5, 0.9]) {
        const outcomes: SplitOutcome[] = [];
        expect(scan(script, share, outcomes), `${name} at ${share}`).toEqual(one);
        expect(outcomes, name).toHaveLength(1);
        expect(outcomes[0]?.error, name).toBeTruthy();
      }
    }
  });
});
