/**
 * Issue 29, a first meeting's dry run: a directory that holds files, never
 * synced, looked at against a workspace that holds files. `status` and
 * `--dry-run` say what the run would do (first-meeting.test.ts): a path
 * with other content on each side is a conflict, a path alike on both
 * moves nothing, a path on one side goes to the other; and the look
 * changes nothing, neither the folder nor the workspace.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

const THEIRS = { "notes.txt": "the workspace's notes\n", "theirs.txt": "t\n", "docs/a.txt": "a\n" };
const MINE = { "notes.txt": "my own notes\n", "mine.txt": "m\n", "docs/a.txt": "a\n" };

interface Look {
  readonly toPush: { path: string }[];
  readonly toPull: { path: string }[];
  readonly conflicts: { path: string }[];
}
const paths = (items: readonly { path: string }[]) => items.map((c) => c.path).sort();

describe("a first meeting's dry run", () => {
  it("names what differs as conflicts and what moves as pushes and pulls, as the sync then does, changing nothing", () => {
    const env = cliEnv(newWorkspace());
    const origin = tempDir("meet-origin");
    writeTree(origin, THEIRS);
    expect(ferry(["push", origin], env).status).toBe(0);
    const dir = tempDir("meet-dry");
    writeTree(dir, MINE);
    // The same bytes saved at the same moment on both sides: a path alike in every way.
    expect(ferry(["pull", tempDir("unused")], env).status).toBe(0);

    for (const args of [
      ["status", dir],
      ["sync", dir, "--dry-run"],
    ]) {
      const r = ferry(args, env);
      expect(r.status, args.join(" ")).toBe(0);
      expect(r.stdout).toContain("  conflict  file    notes.txt\n");
      expect(r.stdout).toContain("  push  file    mine.txt\n");
      expect(r.stdout).toContain("  pull  file    theirs.txt\n");
      expect(r.stdout).not.toMatch(/(push|pull) {2}file {4}notes\.txt/);
      const look = json<Look>(ferry([...args, "--json"], env));
      expect(paths(look.conflicts)).toEqual(["notes.txt"]);
      expect(paths(look.toPush)).toEqual(["mine.txt"]);
      // docs/a.txt has the same bytes on both sides: at most its mtime is taken from the server.
      expect(paths(look.toPull).filter((p) => p !== "docs/a.txt")).toEqual(["theirs.txt"]);
    }
    // A pull alone pushes nothing, and keeps the local notes as a copy all the same.
    const pull = json<Look>(ferry(["pull", dir, "--dry-run", "--json"], env));
    expect([paths(pull.conflicts), paths(pull.toPush)]).toEqual([["notes.txt"], []]);
    // A push into a workspace with content compares the whole state first, pulling what it lacks.
    const push = json<Look>(ferry(["push", dir, "--dry-run", "--json"], env));
    expect(paths(push.conflicts)).toEqual(["notes.txt"]);
    expect(paths(push.toPull)).toContain("theirs.txt");

    // Nothing changed: no binding, the files as they were, the workspace as it was.
    expect(existsSync(join(dir, ".ferry"))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["docs", "mine.txt", "notes.txt"]);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("my own notes\n");
    expect(paths(json<Look>(ferry(["status", origin, "--json"], env)).toPull)).toEqual([]);

    // The sync does what the look said.
    const run = ferry(["sync", dir, "--json"], env);
    expect(run.status).toBe(3);
    const done = json<{ conflicts: { path: string }[]; sent: { path: string }[] }>(run);
    expect(paths(done.conflicts)).toEqual(["notes.txt"]);
    expect(paths(done.sent)).toContain("mine.txt");
    expect(readFileSync(join(dir, "theirs.txt"), "utf8")).toBe("t\n");
  });
});

describe("a fresh host's look at deletions it never had", () => {
  it("lists no deletion of a path the folder never held, in status and every dry run", () => {
    const env = cliEnv(newWorkspace());
    const origin = tempDir("gone-origin");
    writeTree(origin, { "kept.txt": "k\n", "dropped.txt": "d\n", "old/x.txt": "x\n" });
    expect(ferry(["push", origin], env).status).toBe(0);
    rmSync(join(origin, "dropped.txt"));
    rmSync(join(origin, "old"), { recursive: true });
    expect(ferry(["push", origin], env).status).toBe(0);

    // Never synced, and a folder that synced once but never held the deleted paths.
    const fresh = tempDir("gone-fresh");
    const later = tempDir("gone-later");
    writeTree(later, { "kept.txt": "k\n" });
    for (const dir of [fresh, later])
      for (const args of [
        ["status", dir],
        ["pull", dir, "--dry-run"],
        ["sync", dir, "--dry-run"],
      ]) {
        const look = json<{ toPull: { path: string; kind: string }[] }>(ferry([...args, "--json"], env));
        expect(
          look.toPull.filter((c) => c.kind === "gone").map((c) => c.path),
          args.join(" "),
        ).toEqual([]);
        expect(paths(look.toPull).filter((p) => p !== "kept.txt")).toEqual([]);
      }
  });
});
