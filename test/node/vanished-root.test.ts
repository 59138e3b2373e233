/**
 * Issue 26 case 2: a root that vanished, was replaced, or was emptied at
 * once stops the host rather than spreading the deletion. A watch whose
 * folder is deleted (its `.ferry/` too) or replaced stops with `root_gone`
 * or `root_replaced` and pushes nothing; a push that would delete most of
 * the tree is held back with `mass_delete` unless `--allow-mass-delete`.
 * Real processes against the real server.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { childrenEndedAfterEach, cliEnv, ferry, ferryAsync, outputOf } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);

const running = childrenEndedAfterEach();

/** The workspace as a fresh host pulls it. */
function serverTree(env: NodeJS.ProcessEnv): Record<string, string> {
  const dir = tempDir("vanished-probe");
  const r = ferry(["pull", dir, "--memory"], env);
  if (r.status !== 0) throw new Error(r.stderr);
  return snapshot(dir);
}

/** A folder of `files` files in two directories, pushed to a fresh workspace. */
function pushedTree(label: string, files = 12) {
  const env = cliEnv(newWorkspace());
  const root = tempDir(label);
  const tree: Record<string, string> = {};
  for (let i = 0; i < files; i++) tree[`d${i % 2}/f${i}.txt`] = `file ${i}\n`;
  writeTree(root, tree);
  const r = ferry(["push", root], env);
  if (r.status !== 0) throw new Error(r.stderr);
  return { env, root, before: serverTree(env) };
}

interface Watching {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  log(): string;
}

async function startWatch(root: string, env: NodeJS.ProcessEnv): Promise<Watching> {
  const child = ferryAsync(["sync", root, "--watch"], env);
  running.push(child);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const log = outputOf(child);
  await until(
    () => `the watch of ${root}: ${log()}`,
    () => /watching/.test(log()),
  );
  return { child, exited, log };
}

describe("a root that vanished or was emptied at once", () => {
  it("stops a watch whose folder is deleted, .ferry/ and all, pushing nothing", async () => {
    const { env, root, before } = pushedTree("vanished-rm", 40);
    const watch = await startWatch(root, env);
    rmSync(root, { recursive: true, force: true });
    const code = await watch.exited;
    expect(code).toBe(1);
    expect(watch.log()).toMatch(/ferry: root_gone: /);
    expect(watch.log()).not.toMatch(/ENOENT/);
    expect(watch.log()).not.toMatch(/\(deleted\)/);
    expect(serverTree(env)).toEqual(before);
  });

  it("stops a watch whose folder is replaced by an empty one (a mount point left bare), pushing nothing", async () => {
    const { env, root, before } = pushedTree("vanished-replaced");
    const watch = await startWatch(root, env);
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root);
    const code = await watch.exited;
    expect(code).toBe(1);
    expect(watch.log()).toMatch(/ferry: root_(gone|replaced): /);
    expect(serverTree(env)).toEqual(before);
    expect(readdirSync(root)).toEqual([]);
  });

  it("refuses to start a watch on a folder that is not there (a mount not made yet), making nothing", () => {
    const { env, before } = pushedTree("vanished-unmounted");
    const mountPoint = join(tempDir("vanished-mounts"), "data");
    const r = ferry(["sync", mountPoint, "--watch"], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `ferry: not_a_directory: ${mountPoint} does not exist: a watch syncs a folder that is there (mount or make it first)\n`,
    );
    expect(existsSync(mountPoint)).toBe(false);
    expect(serverTree(env)).toEqual(before);
  });

  it("holds back a watch's push of an emptied folder, and pushes it in one explicit step", async () => {
    const { env, root, before } = pushedTree("vanished-emptied");
    const watch = await startWatch(root, env);
    for (const name of ["d0", "d1"]) rmSync(join(root, name), { recursive: true });
    const code = await watch.exited;
    expect(code).toBe(1);
    expect(watch.log()).toMatch(/ferry: mass_delete: this push would delete 14 of the 14 paths of /);
    expect(serverTree(env)).toEqual(before);

    // A plain command holds it back as well, until the user confirms it.
    const held = ferry(["sync", root], env);
    expect(held.status).toBe(1);
    expect(held.stderr).toMatch(/^ferry: mass_delete: .*--allow-mass-delete/);
    expect(serverTree(env)).toEqual(before);
    const confirmed = ferry(["push", root, "--allow-mass-delete"], env);
    expect([confirmed.status, confirmed.stderr]).toEqual([0, ""]);
    expect(serverTree(env)).toEqual({});
  });

  it("holds back a plain push deleting over the configured share of the tree, and not below it", () => {
    const { env, root, before } = pushedTree("vanished-share", 30);
    // 16 of 32 paths: half, not over it; with the default rule, far below 1,000 paths.
    for (let i = 0; i < 16; i++) rmSync(join(root, `d${i % 2}/f${i}.txt`));
    const strict = { ...env, FERRY_MASS_DELETE: "40%:20" };
    const held = ferry(["push", root], strict);
    expect(held.status).toBe(1);
    expect(held.stderr).toMatch(/^ferry: mass_delete: this push would delete 16 of the 32 paths of /);
    expect(serverTree(env)).toEqual(before);
    const pushed = ferry(["push", root], env);
    expect([pushed.status, pushed.stderr]).toEqual([0, ""]);
    expect(Object.keys(serverTree(env))).toHaveLength(16);
    expect(ferry(["push", root], { ...env, FERRY_MASS_DELETE: "lots" }).status).toBe(2);
    expect(existsSync(join(root, ".ferry"))).toBe(true);
  });
});
