/**
 * A server's data directory never travels (found by the tester): a folder
 * that holds `ferry serve`'s default `.ferry-server` (started in a project,
 * as README shows) synced it, each push wrote a pack, which was a new file
 * to push, and the disk filled. `.ferry-server` is left alone at any depth,
 * as `.ferry` is; `ferry serve` refuses any other data directory inside a
 * synced folder; and the data directory is this user's alone (0700): its
 * packs hold every workspace's bytes.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, FERRY_BIN, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { type ServeProcess, startServeProcess } from "./support/serve-process.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);
const running: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

describe("a server's data directory", () => {
  it("is never synced, at any depth, by a push, a status or a pull", () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("holds-server");
    writeTree(dir, {
      "a.txt": "a\n",
      ".ferry-server/do/ns/x.sqlite": "db",
      "tools/.ferry-server/r2/ferry-packs/blobs/k": "pack",
    });
    const look = json<{ toPush: { path: string }[] }>(ferry(["status", dir, "--json"], env));
    expect(look.toPush.map((c) => c.path).sort()).toEqual(["a.txt", "tools"]);
    expect(ferry(["push", dir], env).status).toBe(0);
    const copy = tempDir("holds-server-copy");
    expect(ferry(["pull", copy], env).status).toBe(0);
    expect(Object.keys(snapshot(copy)).sort()).toEqual(["a.txt", "tools"]);
  });

  it("may not be another folder inside a synced folder: serve refuses, making nothing", () => {
    const env = cliEnv(newWorkspace());
    const root = tempDir("synced-root");
    writeTree(root, { "a.txt": "a\n" });
    expect(ferry(["push", root], env).status).toBe(0);
    const data = join(root, "sub", "server-data");
    const spawnEnv: NodeJS.ProcessEnv = { ...process.env };
    delete spawnEnv.PORT;
    const r = spawnSync(process.execPath, [FERRY_BIN, "serve", "--port", "0", "--data", data], {
      env: spawnEnv,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^ferry: data_in_synced_folder: [^\n]*synced-root[^\n]*\.ferry-server[^\n]*\n$/);
    expect(existsSync(join(root, "sub"))).toBe(false);
  });

  it("is this user's alone", async () => {
    const data = join(tempDir("private-data"), "data");
    mkdirSync(data, { mode: 0o755 });
    const server = await startServeProcess(data);
    running.push(server);
    expect(statSync(data).mode & 0o777).toBe(0o700);
  });
});
