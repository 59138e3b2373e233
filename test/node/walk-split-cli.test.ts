/**
 * `ferry sync` walking a tree on two threads (client/scan/split-walk.ts):
 * FERRY_WALK_SPLIT sets the fewest recorded paths that get a worker, so a
 * small tree can take the path a large one takes. The CLI must start the
 * worker (seen by a preload that wraps worker_threads.Worker), find exactly
 * the edits, additions and deletions on both sides of the cut, and then
 * nothing; with `off` it starts none.
 */
import { readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe("ferry sync on two threads", () => {
  it("starts a worker for the walk and finds exactly what changed, then nothing", () => {
    const ws = newWorkspace();
    const src = tempDir("walk-split");
    const files: Record<string, string> = {};
    for (const dir of ["a", "a.js", "b", "c/d", "c/e", "f"]) {
      for (let i = 0; i < 5; i++) files[`${dir}/file-${i}.txt`] = `${dir} ${i}\n`;
    }
    writeTree(src, files);
    // Written long ago: a file modified just now is read again by the next scan (racily clean).
    const old = () => {
      for (const file of Object.keys(files)) utimesSync(join(src, file), 1_000_000, 1_000_000);
    };
    old();
    const dir = tempDir("walk-split-preload");
    const preload = join(dir, "workers.cjs");
    const report = join(dir, "workers.txt");
    // NODE_OPTIONS' --require runs in the walk's worker thread too: only the main thread reports, or the
    // worker's exit could write its own 0 after the main thread's count.
    writeFileSync(
      preload,
      `const threads = require("node:worker_threads"); const Worker = threads.Worker; let started = 0;
       if (threads.isMainThread) {
         threads.Worker = class extends Worker { constructor(...args) { super(...args); started++; } };
         process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, String(started)));
       }`,
    );
    const sync = (split: string) => {
      const r = ferry(
        ["sync", src, "--json"],
        cliEnv(ws, { FERRY_WALK_SPLIT: split, NODE_OPTIONS: `--require ${preload}` }),
      );
      expect(r.status, r.stderr).toBe(0);
      const sent = json<{ sent: { path: string; kind: string }[] }>(r).sent;
      return { sent: sent.map((e) => `${e.kind} ${e.path}`).sort(), workers: Number(readFileSync(report, "utf8")) };
    };
    expect(sync("1").sent).toHaveLength(37);
    // Changes all over the tree, on both sides of any cut: an edit, a deletion, a new file, a directory gone.
    writeFileSync(join(src, "a/file-1.txt"), "edited\n");
    rmSync(join(src, "a.js/file-2.txt"));
    writeFileSync(join(src, "c/d/new.txt"), "new\n");
    rmSync(join(src, "c/e"), { recursive: true });
    writeFileSync(join(src, "f/file-4.txt"), "edited too\n");
    utimesSync(join(src, "a/file-1.txt"), 2_000_000, 2_000_000);
    utimesSync(join(src, "c/d/new.txt"), 2_000_000, 2_000_000);
    utimesSync(join(src, "f/file-4.txt"), 2_000_000, 2_000_000);
    const changed = sync("1");
    expect(changed.workers).toBe(1);
    expect(changed.sent).toEqual(
      [
        "file a/file-1.txt",
        "gone a.js/file-2.txt",
        "file c/d/new.txt",
        "gone c/e",
        ...[0, 1, 2, 3, 4].map((i) => `gone c/e/file-${i}.txt`),
        "file f/file-4.txt",
      ].sort(),
    );
    for (const [split, workers] of [
      ["1", 1],
      ["off", 0],
      // The default is one thread.
      ["", 0],
    ] as const) {
      const again = sync(split);
      expect(again, `FERRY_WALK_SPLIT=${split}: ${JSON.stringify(again)}`).toEqual({ sent: [], workers });
    }
  });
});
