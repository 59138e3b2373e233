/**
 * Trees two thousand levels deep, whose deepest paths are valid on the wire
 * (under 4,096 bytes) but too long for this machine once joined to a root
 * (PATH_MAX, 4,096 bytes with the root): the one-thread walk, a pull, and a
 * root moved deeper. A path out of reach is skipped or refused alone, with
 * its reason, and the run exits 3; everything else moves; nothing the
 * server holds is deleted because a host cannot reach it.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferryRun, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";

/** Temporary directories of this file: removed with `rm -rf` first (Node's rmSync names every path, and fails past PATH_MAX). */
const deepDirs: string[] = [];
afterEach(async () => {
  for (const dir of deepDirs.splice(0)) spawnSync("rm", ["-rf", dir]);
  await cleanup();
});

function deepDir(label: string): string {
  const dir = tempDir(label);
  deepDirs.push(dir);
  return dir;
}

/** Linux's PATH_MAX counts the terminating NUL: a path of 4,095 bytes is the longest a system call takes. */
const LONGEST_ABS = 4095;
/** Room a pull needs past a file's name for its temporary file beside it (`.ferry-tmp-<pid>-<n>`). */
const TEMP_ROOM = 32;
/** Bytes of a chain made (or renamed) in one piece, so that no path named here is past PATH_MAX. */
const PIECE_BYTES = 1500;
/** Names longer than this root's by as much cannot reach the deepest reachable level of a chain of 16-byte names. */
const LONGER = "a-root-deeper-than-the-first-by-sixty-bytes-and-then-some-more";

/**
 * A chain of directories named `seg`, one in another, with files `f` at
 * some levels: `d/d/…/d` thousands of levels deep, or `dddddddddddddddd/…`
 * a few hundred.
 */
class Chain {
  constructor(private readonly seg: string) {}

  /** The file `f` at `level` directories below the root. */
  fileAt(level: number): string {
    return `${`${this.seg}/`.repeat(level)}f`;
  }

  /** The deepest level whose file a host at `root` can push and a host at a root as long can pull. */
  deepestReachable(root: string): number {
    return Math.floor((LONGEST_ABS - Buffer.byteLength(root) - 2 - TEMP_ROOM) / (this.seg.length + 1));
  }

  /**
   * `levels` directories under `root`, with a file (its level in its text)
   * at each of `filesAt`: built a piece at a time in a scratch directory and
   * renamed into place, since a path past PATH_MAX cannot be named.
   */
  build(root: string, levels: number, filesAt: readonly number[]): void {
    const perPiece = Math.floor(PIECE_BYTES / (this.seg.length + 1));
    for (let placed = 0; placed < levels; placed += perPiece) {
      const n = Math.min(perPiece, levels - placed);
      const scratch = deepDir("deep-piece");
      mkdirSync(join(scratch, `${this.seg}/`.repeat(n)), { recursive: true });
      for (const k of filesAt) {
        if (k > placed && k <= placed + n) writeFileSync(join(scratch, this.fileAt(k - placed)), `level ${k}\n`);
      }
      renameSync(join(scratch, this.seg), join(root, `${this.seg}/`.repeat(placed), this.seg));
    }
  }
}

/** Thousands of levels. */
const DEEP = new Chain("d");
/** Hundreds of levels: PATH_MAX reached at a tenth of the entries. */
const LONG = new Chain("d".repeat(16));

/**
 * `ferry sync --json` of `dir`: its status, report and the reasons of every line it printed for a path.
 * Not spawnSync: its 1 MiB of output at most cuts short a report that names thousands of deep paths.
 */
async function syncOf(dir: string, env: NodeJS.ProcessEnv) {
  const r = await ferryRun(["sync", dir, "--json"], env);
  const report = json<{ sent: { path: string; kind: string }[]; received: unknown[] }>(r);
  const reasons = r.stderr
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => /^ferry: (skipped|refused): (?:d+\/)*[df]+: ([A-Z]+)/.exec(line)?.slice(1, 3).join(" ") ?? line);
  return { status: r.status, report, reasons: [...new Set(reasons)] };
}

describe("trees thousands of levels deep", { timeout: 300_000 }, () => {
  it("pushes every path it can reach and skips, alone, those too long once joined to the root", async () => {
    const env = cliEnv(newWorkspace());
    const root = deepDir("deep-a");
    const deepest = DEEP.deepestReachable(root);
    writeFileSync(join(root, "top.txt"), "top\n");
    DEEP.build(root, deepest + 20, [1000, deepest, deepest + 18]);
    expect(Buffer.byteLength(DEEP.fileAt(deepest + 18))).toBeLessThan(4096); // valid on the wire
    const first = await syncOf(root, env);
    expect(first.reasons).toEqual(["skipped ENAMETOOLONG"]);
    expect(first.status).toBe(3);
    expect(first.report.sent.map((s) => s.path)).toEqual(
      expect.arrayContaining([DEEP.fileAt(1000), DEEP.fileAt(deepest)]),
    );
    const again = await syncOf(root, env);
    expect([again.status, again.report.sent, again.report.received]).toEqual([3, [], []]);
    const other = deepDir("deep-b");
    const otherRun = await syncOf(other, env);
    expect(otherRun.reasons).toEqual([]);
    expect(otherRun.status).toBe(0);
    expect(readFileSync(join(other, DEEP.fileAt(deepest)), "utf8")).toBe(`level ${deepest}\n`);
    expect(readFileSync(join(other, DEEP.fileAt(1000)), "utf8")).toBe("level 1000\n");
    expect(readFileSync(join(other, "top.txt"), "utf8")).toBe("top\n");
  });

  it("refuses on a pull only the paths too long under a longer root, applies the rest, and tries them again", async () => {
    const env = cliEnv(newWorkspace());
    const root = deepDir("deep-a");
    const deepest = LONG.deepestReachable(root);
    writeFileSync(join(root, "top.txt"), "top\n");
    LONG.build(root, deepest, [100, deepest]);
    expect((await syncOf(root, env)).status).toBe(0);
    const longer = join(deepDir("deep-b"), LONGER);
    const pulled = await syncOf(longer, env);
    expect(pulled.reasons).toEqual(["refused ENAMETOOLONG"]);
    expect(pulled.status).toBe(3);
    expect(readFileSync(join(longer, LONG.fileAt(100)), "utf8")).toBe("level 100\n");
    expect(readFileSync(join(longer, "top.txt"), "utf8")).toBe("top\n");
    const again = await syncOf(longer, env);
    expect([again.status, again.reasons, again.report.sent]).toEqual([3, ["refused ENAMETOOLONG"], []]);
  });

  it("deletes nothing on the server that a root moved deeper can no longer reach", async () => {
    const env = cliEnv(newWorkspace());
    const root = deepDir("deep-a");
    const deepest = LONG.deepestReachable(root);
    LONG.build(root, deepest, [100, deepest]);
    expect((await syncOf(root, env)).status).toBe(0);
    const moved = join(deepDir("deep-b"), LONGER);
    renameSync(root, moved);
    const after = await syncOf(moved, env);
    expect(after.reasons).toEqual(["skipped ENAMETOOLONG"]);
    expect([after.status, after.report.sent]).toEqual([3, []]);
    const other = deepDir("deep-c");
    const otherRun = await syncOf(other, env);
    expect(otherRun.reasons).toEqual([]);
    expect(otherRun.status).toBe(0);
    expect(readFileSync(join(other, LONG.fileAt(deepest)), "utf8")).toBe(`level ${deepest}\n`);
  });
});
