/**
 * Issue 26 case 3, end to end: a directory's first sync or pull with a
 * workspace that has content keeps both sides of every path that differs
 * (the server's at the path, the local one as a conflict copy), whatever
 * the mtimes say; identical content is adopted with no copy; paths on one
 * side only go to the other. A `--memory` host after a restart is a lost
 * store instead (reconcile-history.test.ts), told apart by the directory's
 * `.ferry/root.db`.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, rmSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { chmod, symlink, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");
const copiesIn = (root: string) =>
  readdirSync(root, { recursive: true })
    .map(String)
    .filter((p) => /\.conflict-/.test(p) && !p.includes("/.ferry"))
    .sort();

interface Conflicts {
  readonly conflicts: { readonly path: string; readonly copy: string }[];
}

/** A workspace pushed from another host with `files`; its env. */
function workspaceWith(files: Record<string, string>): NodeJS.ProcessEnv {
  const env = cliEnv(newWorkspace());
  const origin = tempDir("origin");
  writeTree(origin, files);
  expect(ferry(["push", origin], env).status).toBe(0);
  return env;
}

/** Sets a path's mtime `seconds` from now (negative: in the past). */
function touch(root: string, path: string, seconds: number): void {
  const t = new Date(Date.now() + seconds * 1000);
  utimesSync(join(root, path), t, t);
}

describe.each(["sync", "pull"])("a first %s into a directory that holds files", (verb) => {
  it("keeps the server's file at the path and the local one as a conflict copy, even when the local one is newer", () => {
    const env = workspaceWith({ "notes.txt": "the workspace's notes\n", "same.txt": "same\n", "theirs.txt": "t\n" });
    const dir = tempDir("meet");
    writeTree(dir, { "notes.txt": "my own notes\n", "same.txt": "same\n", "mine.txt": "m\n" });
    touch(dir, "notes.txt", 3600);

    const r = ferry([verb, dir, "--json", "--label", "laptop"], env);
    expect(r.status).toBe(3);
    const { conflicts } = json<Conflicts>(r);
    expect(conflicts.map((c) => c.path)).toEqual(["notes.txt"]);
    const copy = (conflicts[0] as { copy: string }).copy;
    expect(copy).toMatch(/^notes\.conflict-laptop-\d{8}-\d{6}\.txt$/);
    expect(r.stderr).toBe(`ferry: conflict: kept the local notes.txt as ${copy}\n`);
    expect(read(dir, "notes.txt")).toBe("the workspace's notes\n");
    expect(read(dir, copy)).toBe("my own notes\n");
    expect(read(dir, "theirs.txt")).toBe("t\n");
    // Identical content is adopted: no copy of it.
    expect(copiesIn(dir)).toEqual([copy]);

    // The server still has its own version; the local one and the copy go up with the next sync.
    expect(ferry(["sync", dir], env).status).toBe(0);
    const check = tempDir("meet-check");
    expect(ferry(["pull", check], env).status).toBe(0);
    expect(read(check, "notes.txt")).toBe("the workspace's notes\n");
    expect(read(check, copy)).toBe("my own notes\n");
    expect(read(check, "mine.txt")).toBe("m\n");
  });

  it("keeps a local directory, symlink or file where the server has another kind, and takes the server's mode for the same bytes", () => {
    const env = workspaceWith({
      "x/inner.txt": "server's x/inner\n",
      f: "server's file f\n",
      link: "a file\n",
      "run.sh": "echo\n",
    });
    const dir = tempDir("meet-kinds");
    writeTree(dir, { x: "a local file x\n", "f/local.txt": "under a local dir f\n", "run.sh": "echo\n" });
    symlink(dir, "link", "x");
    chmod(dir, "run.sh", 0o755);

    const r = ferry([verb, dir, "--json"], env);
    expect(r.status).toBe(3);
    const byPath = new Map(json<Conflicts>(r).conflicts.map((c) => [c.path, c.copy]));
    expect([...byPath.keys()].sort()).toEqual(["f", "link", "x"]);
    expect(read(dir, "x/inner.txt")).toBe("server's x/inner\n");
    expect(read(dir, byPath.get("x") as string)).toBe("a local file x\n");
    expect(read(dir, "f")).toBe("server's file f\n");
    expect(read(dir, `${byPath.get("f")}/local.txt`)).toBe("under a local dir f\n");
    expect(read(dir, "link")).toBe("a file\n");
    const linkCopy = join(dir, byPath.get("link") as string);
    expect(lstatSync(linkCopy).isSymbolicLink()).toBe(true);
    expect(readlinkSync(linkCopy)).toBe("x");
    // Same bytes: adopted, with the workspace's mode (the local tree was never in it).
    expect(lstatSync(join(dir, "run.sh")).mode & 0o777).toBe(0o644);
  });
});

describe("what counts as a first meeting", () => {
  it("is a directory rebound to another workspace (--rebind)", () => {
    const env = workspaceWith({ "notes.txt": "the second workspace's\n" });
    const dir = tempDir("rebind-meet");
    writeTree(dir, { "notes.txt": "pushed to the first\n" });
    const first = cliEnv(newWorkspace());
    expect(ferry(["push", dir], first).status).toBe(0);
    touch(dir, "notes.txt", 3600);

    const r = ferry(["sync", dir, "--rebind", "--json"], env);
    expect(r.status).toBe(3);
    const { conflicts } = json<Conflicts>(r);
    expect(conflicts.map((c) => c.path)).toEqual(["notes.txt"]);
    expect(read(dir, "notes.txt")).toBe("the second workspace's\n");
    expect(read(dir, (conflicts[0] as { copy: string }).copy)).toBe("pushed to the first\n");
  });

  it("is a directory whose .ferry/ was deleted: an earlier version of the workspace's is updated, an edit kept as a copy", () => {
    const env = cliEnv(newWorkspace());
    const a = tempDir("deleted-a");
    const b = tempDir("deleted-b");
    writeTree(a, { "old.txt": "v1\n", "edit.txt": "e1\n" });
    expect(ferry(["sync", a], env).status).toBe(0);
    expect(ferry(["sync", b], env).status).toBe(0);
    rmSync(join(b, ".ferry"), { recursive: true });
    writeTree(a, { "old.txt": "v2 from a\n" });
    expect(ferry(["sync", a], env).status).toBe(0);
    writeTree(b, { "edit.txt": "e2 made on b meanwhile\n" });
    touch(b, "edit.txt", 3600);

    const r = ferry(["sync", b, "--json"], env);
    expect(r.status).toBe(3);
    const { conflicts } = json<Conflicts>(r);
    expect(conflicts.map((c) => c.path)).toEqual(["edit.txt"]);
    // b's old.txt is v1, a version the workspace had: taken as an old copy, updated with no copy.
    expect(read(b, "old.txt")).toBe("v2 from a\n");
    expect(read(b, "edit.txt")).toBe("e1\n");
    expect(read(b, (conflicts[0] as { copy: string }).copy)).toBe("e2 made on b meanwhile\n");
    expect(copiesIn(b)).toHaveLength(1);
  });

  it("is not a --memory host after a restart, which reconciles as a lost store (its later edit wins)", () => {
    const env = cliEnv(newWorkspace());
    const a = tempDir("memory-a");
    const b = tempDir("memory-b");
    writeTree(a, { "edit.txt": "e1\n" });
    expect(ferry(["sync", a], env).status).toBe(0);
    expect(ferry(["sync", b, "--memory"], env).status).toBe(0);
    writeTree(b, { "edit.txt": "e2 made on b\n" });
    touch(b, "edit.txt", 3600);

    const r = ferry(["sync", b, "--memory", "--json"], env);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(json<Conflicts>(r).conflicts).toEqual([]);
    expect(read(b, "edit.txt")).toBe("e2 made on b\n");
    expect(ferry(["sync", a], env).status).toBe(0);
    expect(read(a, "edit.txt")).toBe("e2 made on b\n");
  });
});
