/**
 * Tester finding 2 (issue list of the stop): after a `.ferryignore` rule is
 * removed, a host that never touched a file under it got a conflict copy,
 * which then spread to every host, and `ferry status` did not predict it.
 * The copy it kept while the rule ignored the path has no record, and a
 * plain pull took it for local work. What each case must do: a file on one
 * host only just syncs; the same file on both meets without a copy; a
 * stale copy takes the workspace's version; a genuine difference keeps one
 * conflict copy, on the host that syncs second (README, "Conflicts are
 * kept"); and `ferry status` says each before the sync does it. The real
 * CLI against `ferry serve`.
 */
import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

interface Status {
  toPush: { path: string }[];
  toPull: { path: string }[];
  conflicts: { path: string }[];
}

function sync(dir: string, env: NodeJS.ProcessEnv, exit = 0) {
  const r = ferry(["sync", dir], env);
  expect(r.status, r.stderr).toBe(exit);
  return r;
}

function status(dir: string, env: NodeJS.ProcessEnv) {
  const r = ferry(["status", dir, "--json"], env);
  expect(r.status, r.stderr).toBe(0);
  const s = json<Status>(r);
  return {
    push: s.toPush.map((c) => c.path),
    pull: s.toPull.map((c) => c.path),
    conflicts: s.conflicts.map((c) => c.path),
  };
}

/** Conflict copies under `build/`. */
function copies(dir: string): string[] {
  return readdirSync(join(dir, "build")).filter((n) => n.includes(".conflict-"));
}

/** Hosts a and b in sync, with `build/` ignored by a synced `.ferryignore` (`before`: what both had first). */
function ignoringBuild(before: Record<string, string> = {}) {
  const env = cliEnv(newWorkspace());
  const a = tempDir("a");
  const b = tempDir("b");
  writeTree(a, { "seed.txt": "seed\n", ...before });
  sync(a, env);
  sync(b, env);
  writeFileSync(join(a, ".ferryignore"), "build/\n");
  sync(a, env);
  sync(b, env);
  return { env, a, b };
}

const out = (dir: string) => readFileSync(join(dir, "build/out.txt"), "utf8");

describe("a path no longer ignored, on a host that never touched it", () => {
  it("takes the workspace's version over its stale copy, with no conflict copy", () => {
    const { env, a, b } = ignoringBuild({ "build/out.txt": "old\n" });
    writeFileSync(join(a, "build/out.txt"), "new on a\n");
    writeFileSync(join(a, ".ferryignore"), "# nothing ignored\n");
    expect(status(a, env)).toEqual({ push: [".ferryignore", "build/out.txt"], pull: [], conflicts: [] });
    sync(a, env);
    expect(status(b, env)).toEqual({ push: [], pull: [".ferryignore", "build/out.txt"], conflicts: [] });
    sync(b, env);
    expect(out(b)).toBe("new on a\n");
    sync(a, env);
    expect([copies(a), copies(b)]).toEqual([[], []]);
  });

  it("takes the workspace's version when the rule is removed there", () => {
    const { env, a, b } = ignoringBuild({ "build/out.txt": "old\n" });
    writeFileSync(join(a, "build/out.txt"), "new on a\n");
    writeFileSync(join(b, ".ferryignore"), "# nothing ignored\n");
    sync(b, env);
    expect(status(a, env)).toEqual({ push: ["build/out.txt"], pull: [".ferryignore"], conflicts: [] });
    sync(a, env);
    expect(status(b, env)).toEqual({ push: [], pull: ["build/out.txt"], conflicts: [] });
    sync(b, env);
    expect([out(a), out(b)]).toEqual(["new on a\n", "new on a\n"]);
    expect([copies(a), copies(b)]).toEqual([[], []]);
  });

  it("pulls a file only the other host made while it was ignored", () => {
    const { env, a, b } = ignoringBuild();
    writeTree(a, { "build/out.txt": "made on a\n" });
    writeFileSync(join(a, ".ferryignore"), "# nothing ignored\n");
    sync(a, env);
    expect(status(b, env).pull).toEqual([".ferryignore", "build", "build/out.txt"]);
    sync(b, env);
    expect(out(b)).toBe("made on a\n");
    expect(copies(b)).toEqual([]);
  });

  it("meets a file both hosts made alike without a conflict copy", () => {
    const { env, a, b } = ignoringBuild();
    writeTree(a, { "build/out.txt": "alike\n" });
    writeTree(b, { "build/out.txt": "alike\n" });
    writeFileSync(join(a, ".ferryignore"), "# nothing ignored\n");
    sync(a, env);
    expect(status(b, env).conflicts).toEqual([]);
    sync(b, env);
    sync(a, env);
    expect([copies(a), copies(b)]).toEqual([[], []]);
    expect([out(a), out(b)]).toEqual(["alike\n", "alike\n"]);
  });

  it("keeps one conflict copy of a genuine difference, on the host that syncs second", () => {
    const { env, a, b } = ignoringBuild();
    writeTree(b, { "build/out.txt": "made on b\n" });
    // B's is the older save: it cannot be an edit of A's, so both are kept (README, "Ignoring paths").
    const hourAgo = Date.now() / 1000 - 3600;
    utimesSync(join(b, "build/out.txt"), hourAgo, hourAgo);
    writeTree(a, { "build/out.txt": "made on a\n" });
    writeFileSync(join(a, ".ferryignore"), "# nothing ignored\n");
    sync(a, env);
    expect(status(b, env).conflicts).toEqual(["build/out.txt"]);
    sync(b, env, 3);
    sync(a, env);
    const [copy] = copies(b);
    expect(copies(b)).toHaveLength(1);
    // Pushed like any local file (README, "Conflicts are kept"): every host has the same one copy.
    expect(copies(a)).toEqual([copy]);
    expect(readFileSync(join(a, "build", copy as string), "utf8")).toBe("made on b\n");
    expect([out(a), out(b)]).toEqual(["made on a\n", "made on a\n"]);
  });
});
