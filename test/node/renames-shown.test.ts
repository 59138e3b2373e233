/**
 * Issue 29: renames shown as renames. A path removed and a path added with
 * the same content and mode print as `old -> new` in `status`, `--dry-run`
 * and a sync's lines, on the side that sends them and the side that
 * receives them; a folder whose paths all moved together prints once, with
 * a count. Output only: the wire still carries a tombstone and a new path.
 */
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { childrenEndedAfterEach, cliEnv, ferry, ferryAsync, json, outputOf } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);
const running = childrenEndedAfterEach();

interface Renamed {
  readonly entriesSent: number;
  readonly renamed: { sent: { from: string; to: string }[]; received: { from: string; to: string }[] };
}

describe("renames", () => {
  it("print as renames in status, a dry run and the sync, a folder that moved whole once", () => {
    const env = cliEnv(newWorkspace());
    const a = tempDir("rename-a");
    const b = tempDir("rename-b");
    writeTree(a, {
      "docs/one.txt": "one\n",
      "docs/two.txt": "two\n",
      "docs/deep/three.txt": "three\n",
      "keep/x.txt": "x\n",
      "keep/y.txt": "y\n",
      "a.txt": "a\n",
    });
    expect(ferry(["push", a], env).status).toBe(0);
    expect(ferry(["pull", b], env).status).toBe(0);
    renameSync(join(a, "docs"), join(a, "notes"));
    renameSync(join(a, "a.txt"), join(a, "b.txt"));
    // A folder renamed with a file changed on the way: what moved unchanged is a rename, the rest is not.
    renameSync(join(a, "keep"), join(a, "kept"));
    writeFileSync(join(a, "kept/y.txt"), "y changed\n");

    for (const args of [
      ["status", a],
      ["sync", a, "--dry-run"],
    ]) {
      const r = ferry(args, env);
      expect(r.status, args.join(" ")).toBe(0);
      const lines = r.stdout.split("\n").filter((l) => l.startsWith("  "));
      expect(lines, args.join(" ")).toEqual([
        "  push  rename  a.txt -> b.txt",
        "  push  rename  docs/ -> notes/ (3 files)",
        "  push  rename  keep/x.txt -> kept/x.txt",
        "  push  gone    keep",
        "  push  gone    keep/y.txt",
        "  push  dir     kept",
        "  push  file    kept/y.txt",
      ]);
      expect(r.stdout).toMatch(/: 7 to push, 0 to pull \(server rev 1\)\n/);
    }

    const sync = ferry(["sync", a], env);
    expect(sync.status).toBe(0);
    expect(sync.stdout.split("\n").filter((l) => l.startsWith("  "))).toEqual([
      "  sent      rename  a.txt -> b.txt",
      "  sent      rename  docs/ -> notes/ (3 files)",
      "  sent      rename  keep/x.txt -> kept/x.txt",
    ]);

    // The other folder: its status, and the sync that receives them, say the same.
    const look = ferry(["status", b], env);
    expect(look.stdout).toContain("  pull  rename  docs/ -> notes/ (3 files)\n");
    expect(look.stdout).toContain("  pull  rename  a.txt -> b.txt\n");
    const received = ferry(["sync", b, "--json"], env);
    expect(received.status).toBe(0);
    const report = json<Renamed>(received);
    expect(report.renamed.received.map((r) => `${r.from} -> ${r.to}`)).toEqual([
      "a.txt -> b.txt",
      "docs/deep/three.txt -> notes/deep/three.txt",
      "docs/one.txt -> notes/one.txt",
      "docs/two.txt -> notes/two.txt",
      "keep/x.txt -> kept/x.txt",
    ]);
  });

  it("name a folder renamed under a watch once, as its line says what moved", async () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("rename-watch");
    writeTree(dir, { "docs/one.txt": "one\n", "docs/two.txt": "two\n" });
    const watch = ferryAsync(["sync", dir, "--watch", "--interval", "200"], env);
    running.push(watch);
    const log = outputOf(watch);
    await until(
      () => `the watch to start: ${log()}`,
      () => log().includes("ferry: watching "),
    );
    renameSync(join(dir, "docs"), join(dir, "notes"));
    const watchLine = /^ferry \d\d:\d\d:\d\d sent /;
    const lines = () => log().split("\n");
    await until(
      () => `the rename sent: ${log()}`,
      () => lines().some((l) => watchLine.test(l)),
    );
    const line = lines().find((l) => watchLine.test(l));
    expect(line).toMatch(/^ferry \d\d:\d\d:\d\d sent docs\/ -> notes\/ \(2 files\)$/);
  }, 60_000);
});
