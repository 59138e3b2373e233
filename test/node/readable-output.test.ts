/**
 * Output people can read (issue 29): a conflict named as one, times in the
 * reader's zone, durations in the units given, and a watch that will not
 * pretend to be a dry run.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe("what the CLI prints", () => {
  it("names a path changed on both sides as a conflict in status and a dry run", () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const a = tempDir("conflict-a");
    const b = tempDir("conflict-b");
    writeTree(a, { "notes.txt": "first\n", "other.txt": "o\n" });
    expect(ferry(["push", a], env).status).toBe(0);
    expect(ferry(["pull", b], env).status).toBe(0);
    writeFileSync(join(a, "notes.txt"), "from a\n");
    expect(ferry(["push", a], env).status).toBe(0);
    writeFileSync(join(b, "notes.txt"), "from b\n");
    writeFileSync(join(b, "mine.txt"), "only here\n");

    for (const args of [
      ["status", b],
      ["sync", b, "--dry-run"],
    ]) {
      const r = ferry(args, env);
      expect(r.status, args.join(" ")).toBe(0);
      expect(r.stdout).toMatch(/: 1 to push, 0 to pull, 1 in conflict \(server rev 2\)\n/);
      expect(r.stdout).toContain("  conflict  file    notes.txt\n");
      expect(r.stdout).toContain("  push  file    mine.txt\n");
      expect(r.stdout).not.toMatch(/(push|pull) {2}file {4}notes\.txt/);
      const j = json<{ conflicts: { path: string }[] }>(ferry([...args, "--json"], env));
      expect(j.conflicts.map((c) => c.path)).toEqual(["notes.txt"]);
    }
  });

  it("prints log times in the reader's zone, with the zone, and as UTC in --json", () => {
    const ws = newWorkspace();
    const dir = tempDir("log-zone");
    writeTree(dir, { "a.txt": "a\n" });
    expect(ferry(["push", dir], cliEnv(ws)).status).toBe(0);
    const text = ferry(["log", dir], cliEnv(ws, { TZ: "Asia/Kolkata" }));
    expect(text.status).toBe(0);
    expect(text.stdout.split("\n")[1]).toMatch(/^ +1 {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0530 {2}/);
    const j = json<{ revs: { time: string; at: number }[] }>(ferry(["log", dir, "--json"], cliEnv(ws)));
    expect(j.revs[0]?.time).toBe(new Date(j.revs[0]?.at ?? 0).toISOString());
    expect(j.revs[0]?.time).toMatch(/Z$/);
  });

  it("says a link's lifetime in the units given, and its limit the same way", () => {
    const ws = newWorkspace();
    const dir = tempDir("ttl");
    writeTree(dir, { "a.txt": "a\n" });
    expect(ferry(["push", dir], cliEnv(ws)).status).toBe(0);
    const long = ferry(["open", dir, "--no-browser", "--ttl", "8d"], cliEnv(ws));
    expect(long).toMatchObject({ status: 2, stdout: "" });
    expect(long.stderr).toBe("ferry: usage: --ttl 8d: a link works at most 7d\n");
    const ok = ferry(["open", dir, "--no-browser", "--ttl", "2d"], cliEnv(ws));
    expect(ok.status).toBe(0);
    expect(ok.stderr).toMatch(new RegExp(`^ferry: read-only link to ${ws}, valid for 2d \\(until \\d{4}-`));
  });

  it("refuses --watch with --dry-run as a usage error", () => {
    const r = ferry(["sync", tempDir("watch-dry"), "--watch", "--dry-run"], cliEnv(newWorkspace()));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^ferry: usage: --watch and --dry-run do not go together .*\(see 'ferry sync --help'\)\n$/,
    );
  });
});
