/**
 * Issue 26 case 1: a synced folder has one root, found from any folder
 * inside it, as git finds its repository. A command given a path inside a
 * synced folder (or run there with `.`) works on the whole folder, and a
 * `.ferry/` is never made below a root; `ferry log` and `ferry restore`
 * take their path relative to where they run; a new root above an existing
 * one is refused (`nested_root`). Real processes against the real server.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CliResult,
  childrenEndedAfterEach,
  cliEnv,
  FERRY_BIN,
  ferry,
  ferryAsync,
  json,
  outputOf,
} from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);

const running = childrenEndedAfterEach();

/** `ferry <args>` run from the folder `cwd`, as a user in a shell there would. */
function ferryIn(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): CliResult {
  const r = spawnSync(process.execPath, [FERRY_BIN, ...args], { cwd, env, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The workspace as a fresh host pulls it. */
function serverTree(env: NodeJS.ProcessEnv): Record<string, string> {
  const dir = tempDir("one-root-probe");
  const r = ferry(["pull", dir, "--memory"], env);
  if (r.status !== 0) throw new Error(r.stderr);
  return snapshot(dir);
}

/** A synced folder holding README and src/a.txt, pushed to a fresh workspace. */
function syncedHost(label: string) {
  const env = cliEnv(newWorkspace());
  const root = tempDir(label);
  writeTree(root, { README: "top\n", "src/a.txt": "a\n" });
  const r = ferry(["push", root], env);
  if (r.status !== 0) throw new Error(r.stderr);
  return { env, root, src: join(root, "src") };
}

describe("a synced folder found from a folder inside it", () => {
  it("syncs the whole folder when run from a subfolder with `.`, making no second root", () => {
    const { env, root, src } = syncedHost("one-root-dot");
    writeFileSync(join(src, "b.txt"), "b\n");
    writeFileSync(join(root, "top.txt"), "outside src\n");

    const r = ferryIn(src, ["sync", "."], env);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`ferry: . is inside the synced folder ${root}: syncing all of it\n`);
    expect(existsSync(join(src, ".ferry"))).toBe(false);
    expect(existsSync(join(src, "src"))).toBe(false);
    expect(existsSync(join(src, "README"))).toBe(false);
    // Both changes reached the workspace at their own paths, the one outside src too.
    expect(serverTree(env)).toEqual(snapshot(root));
    expect(Object.keys(serverTree(env)).sort()).toEqual(["README", "src", "src/a.txt", "src/b.txt", "top.txt"]);
  });

  it("pushes, pulls and shows the status of the whole folder for a path inside it", () => {
    const { env, root, src } = syncedHost("one-root-path");
    writeFileSync(join(root, "top.txt"), "outside src\n");
    const pushed = ferry(["push", join(src, "a.txt"), "--json"], env);
    expect(pushed.status).toBe(0);
    expect(pushed.stderr).toBe(`ferry: ${join(src, "a.txt")} is inside the synced folder ${root}: pushing all of it\n`);
    expect(json<{ sent: { path: string }[] }>(pushed).sent.map((c) => c.path)).toEqual(["top.txt"]);

    const other = tempDir("one-root-other");
    expect(ferry(["pull", other], env).status).toBe(0);
    writeFileSync(join(other, "from-other.txt"), "o\n");
    expect(ferry(["push", other], env).status).toBe(0);
    // A folder not made yet inside the root is a typo or a second root: refused, and not made.
    const refused = ferry(["pull", join(src, "new", "deeper")], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /^ferry: not_a_directory: .* does not exist \(it would be inside the synced folder /,
    );
    expect(existsSync(join(src, "new"))).toBe(false);
    const pulled = ferry(["pull", src], env);
    expect(pulled.status).toBe(0);
    expect(readFileSync(join(root, "from-other.txt"), "utf8")).toBe("o\n");
    const status = ferry(["status", src], env);
    expect(status.stdout).toMatch(/^ferry status: 0 to push, 0 to pull/);
    expect(existsSync(join(src, ".ferry"))).toBe(false);
  });

  it("takes log's and restore's path relative to where they run", () => {
    const { env, root, src } = syncedHost("one-root-log");
    writeFileSync(join(src, "a.txt"), "a, second\n");
    expect(ferry(["push", root], env).status).toBe(0);

    const log = ferryIn(src, ["log", ".", "a.txt", "--json"], env);
    expect(log.status).toBe(0);
    const states = json<{ states: { rev: number; kind: string }[] }>(log).states;
    expect(states.map((s) => s.kind)).toEqual(["file", "file"]);
    // The same versions named from the root.
    expect(json(ferry(["log", root, "src/a.txt", "--json"], env)).states).toEqual(states);

    const first = states[1]?.rev as number;
    const restored = ferryIn(src, ["restore", ".", "a.txt", "--rev", String(first)], env);
    expect(restored.status).toBe(0);
    expect(readFileSync(join(src, "a.txt"), "utf8")).toBe("a\n");
    expect(existsSync(join(src, "src"))).toBe(false);
    expect(existsSync(join(src, ".ferry"))).toBe(false);
    expect(serverTree(env)).toEqual(snapshot(root));
    // A path that leaves the synced folder names nothing in it.
    const outside = ferryIn(src, ["log", ".", "../../elsewhere"], env);
    expect(outside.status).toBe(1);
    expect(outside.stderr).toMatch(/^ferry: invalid_path: \.\.\/\.\.\/elsewhere is outside the synced folder /);
  });

  it("refuses a new root above an existing one, making nothing", () => {
    const { env } = syncedHost("one-root-nested");
    const parent = tempDir("one-root-parent");
    const inner = join(parent, "inner");
    mkdirSync(inner);
    writeTree(inner, { "x.txt": "x\n" });
    expect(ferry(["push", inner], env).status).toBe(0);
    const before = snapshot(parent);

    for (const verb of ["push", "sync", "pull", "status"]) {
      const r = ferry([verb, parent], cliEnv(newWorkspace()));
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^ferry: nested_root: .* holds the synced folder inner: /);
    }
    expect(existsSync(join(parent, ".ferry"))).toBe(false);
    expect(snapshot(parent)).toEqual(before);
  });

  it("hands a command run from a subfolder to the watch of the folder", async () => {
    const { env, root, src } = syncedHost("one-root-watch");
    const watch = ferryAsync(["sync", root, "--watch", "--interval", "600000"], env);
    running.push(watch);
    const log = outputOf(watch);
    await until(
      () => `the watch to serve: ${log()}`,
      () => /watching/.test(log()) && existsSync(join(root, ".ferry", "resident.sock")),
    );
    writeFileSync(join(src, "c.txt"), "c\n");
    // In its own process it would meet the watch's lock; served, it runs on the folder the watch holds.
    const r = ferryIn(src, ["sync", "."], env);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`ferry: . is inside the synced folder ${root}: syncing all of it\n`);
    expect(existsSync(join(src, ".ferry"))).toBe(false);
    expect(serverTree(env)).toEqual(snapshot(root));
    // A path inside the folder that does not exist is refused as without a watch, not served as the whole folder.
    const typo = ferryIn(src, ["push", "nope"], env);
    expect(typo.status).toBe(1);
    expect(typo.stderr).toMatch(/^ferry: not_a_directory: nope does not exist \(it would be inside the synced folder /);
    expect(existsSync(join(src, "nope"))).toBe(false);
  });
});
