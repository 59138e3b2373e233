import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe("a directory bound to its workspace", () => {
  it("is read as not bound yet while another command is creating its store, not as an error", () => {
    const ws = newWorkspace();
    const dir = tempDir("store-being-made");
    writeTree(dir, { "a.txt": "a\n" });
    // What a second command sees in the moment after the first created the file and before it wrote
    // the table (two syncs at once, test/node/kill-anywhere.test.ts): an empty database.
    mkdirSync(join(dir, ".ferry"), { recursive: true });
    writeFileSync(join(dir, ".ferry", "root.db"), "");
    const r = ferry(["sync", dir, "--json"], cliEnv(ws));
    expect(r.status, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ sent: [{ path: "a.txt", kind: "file" }] });
  });

  it("refuses a command naming another workspace, and syncs with it after --rebind", () => {
    const demo = newWorkspace();
    const other = newWorkspace();
    const dir = tempDir("bound");
    writeTree(dir, { "mine.txt": "mine\n" });
    expect(ferry(["push", dir], cliEnv(demo)).status).toBe(0);
    const foreign = tempDir("foreign");
    writeTree(foreign, { "foreign.txt": "not for dir\n" });
    expect(ferry(["push", foreign], cliEnv(other)).status).toBe(0);
    const before = snapshot(dir);

    // A flag names it: the environment names no more than a default (test/node/folder-memory.test.ts).
    for (const verb of ["push", "pull", "sync", "status"]) {
      const r = ferry([verb, dir, "-w", other], cliEnv(other));
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        `ferry: bound_elsewhere: ${dir} is synced with workspace '${demo}' at ${inject("ferryUrl")}, ` +
          `not '${other}' at ${inject("ferryUrl")} (pass --rebind to sync it with the new one from now on)\n`,
      );
    }
    expect(snapshot(dir)).toEqual(before);
    // A read (log) names the directory too: another workspace's history is refused, not shown as this one's.
    const log = ferry(["log", dir, "-w", other], cliEnv(other));
    expect(log.status).toBe(1);
    expect(log.stderr).toBe(
      `ferry: bound_elsewhere: ${dir} is synced with workspace '${demo}' at ${inject("ferryUrl")}, ` +
        `not '${other}' at ${inject("ferryUrl")} (leave out --workspace and --url to use it)\n`,
    );
    expect(ferry(["log", dir], cliEnv(demo)).status).toBe(0);

    const rebound = ferry(["sync", dir, "--rebind", "--json"], cliEnv(other));
    expect(rebound.status).toBe(0);
    expect(existsSync(join(dir, "foreign.txt"))).toBe(true);
    // Bound to the new one now: the old one is refused.
    expect(ferry(["pull", dir, "-w", demo], cliEnv(demo)).status).toBe(1);
    expect(ferry(["pull", dir], cliEnv(demo)).status).toBe(0);
  });

  it("sends the whole tree to the workspace it is rebound to, files new since included", () => {
    const first = newWorkspace();
    const second = newWorkspace();
    const dir = tempDir("rebind-new");
    writeTree(dir, { "old.txt": "pushed to the first\n" });
    expect(ferry(["push", dir], cliEnv(first)).status).toBe(0);
    writeTree(dir, { "new.txt": "new since\n" });

    const r = ferry(["push", dir, "--rebind"], cliEnv(second));
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const copy = tempDir("rebind-copy");
    expect(ferry(["pull", copy], cliEnv(second)).status).toBe(0);
    expect(snapshot(copy)).toEqual(snapshot(dir));
  });

  it("refuses another server for the same workspace name", () => {
    const ws = newWorkspace();
    const dir = tempDir("bound-url");
    writeTree(dir, { "a.txt": "a\n" });
    expect(ferry(["push", dir], cliEnv(ws)).status).toBe(0);
    const elsewhere = inject("ferryUrl").replace("127.0.0.1", "localhost");
    const r = ferry(["push", dir, "--url", elsewhere], cliEnv(ws));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^ferry: bound_elsewhere: .* at http:\/\/127\.0\.0\.1:\d+, not .* at http:\/\/localhost:/);
    // The same server written with a trailing slash is the same binding.
    expect(ferry(["push", dir, "--url", `${inject("ferryUrl")}/`], cliEnv(ws)).status).toBe(0);
  });

  it("refuses to pull a workspace nothing was pushed to (a typo), unless --create", () => {
    const demo = newWorkspace();
    const src = tempDir("typo-src");
    writeTree(src, { "a.txt": "a\n" });
    expect(ferry(["push", src], cliEnv(demo)).status).toBe(0);

    const dir = tempDir("typo");
    const typo = `${demo}x`;
    // A dry run says what the pull would: the same refusal.
    for (const args of [
      ["pull", dir],
      ["pull", dir, "--dry-run"],
    ]) {
      const r = ferry(args, cliEnv(typo));
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(`^ferry: no_such_workspace: nothing was ever pushed to workspace '${typo}' at .*--create.*\\n$`),
      );
    }
    expect(snapshot(dir)).toEqual({});
    expect(ferry(["pull", dir, "--dry-run", "--create"], cliEnv(typo)).status).toBe(0);
    // Not bound by the refused pull: the right name works.
    expect(ferry(["pull", dir], cliEnv(demo)).status).toBe(0);
    expect(Object.keys(snapshot(dir))).toEqual(["a.txt"]);

    const fresh = tempDir("create");
    const created = ferry(["pull", fresh, "--create", "--json"], cliEnv(newWorkspace()));
    expect(created.status).toBe(0);
    expect(json<{ entriesReceived: number }>(created).entriesReceived).toBe(0);
  });

  it("says a new workspace is empty in status, not that the server was restored", () => {
    const dir = tempDir("status-new");
    writeTree(dir, { "a.txt": "a\n" });
    const first = newWorkspace();
    expect(ferry(["push", dir], cliEnv(first)).status).toBe(0);
    const fresh = newWorkspace();
    const r = ferry(["status", dir, "--rebind"], cliEnv(fresh));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`workspace '${fresh}' is empty: nothing was pushed to it yet`);
    expect(r.stdout).not.toContain("restored");
  });
});
