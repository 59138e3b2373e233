/**
 * One `ferry serve` per data directory (found by the tester: two started on
 * one --data without complaint, two runtimes writing the same SQLite
 * files). The second refuses at start with `data_in_use`, naming the first's
 * pid and URL, and touches nothing; a lock left by a server killed outright
 * (SIGKILL) does not block the next start (client/serve/data-lock.ts).
 */
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { FERRY_BIN } from "./support/cli.ts";
import { newWorkspace, tempDir } from "./support/hosts.ts";
import {
  pullTree,
  pushTree,
  type ServeProcess,
  serversStoppedAfterEach,
  startServeProcess,
  statsOf,
} from "./support/serve-process.ts";
import { snapshot } from "./support/tree.ts";

const running = serversStoppedAfterEach();

async function serve(dataDir: string): Promise<ServeProcess> {
  const server = await startServeProcess(dataDir);
  running.push(server);
  return server;
}

/** `ferry serve` on `dataDir`, run to its end (a refusal ends it at once). */
function serveOnce(dataDir: string, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, FERRY_SECRET: inject("ferrySecret") };
  delete env.PORT;
  return spawnSync(process.execPath, [FERRY_BIN, "serve", "--port", "0", "--data", dataDir, ...args], {
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
}

/**
 * What a refused start must leave as it was: what lies directly in the data
 * directory (the lock's files, the folders), with sizes and mtimes. Below,
 * the running server's own SQLite files may change meanwhile: it serves.
 */
function state(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((p) => {
      const s = statSync(join(dir, p));
      return `${p} ${s.isDirectory() ? "dir" : s.size} ${s.mtimeMs}`;
    });
}

describe("ferry serve on a data directory another one serves", () => {
  it("refuses with data_in_use naming the first's pid and URL, and touches nothing", async () => {
    const data = tempDir("serve-lock");
    const first = await serve(data);
    const ws = newWorkspace();
    await pushTree(first.url, ws, { "a.txt": "a\n" });
    const before = state(data);

    const second = serveOnce(data);
    expect([second.status, second.stdout]).toEqual([1, ""]);
    expect(second.stderr).toBe(
      `ferry: data_in_use: ${data} is in use by ferry serve (pid ${first.child.pid}, ${first.url}): ` +
        "stop it first, or give this one another --data\n",
    );
    const json = serveOnce(data, "--json");
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "data_in_use" } });
    expect(state(data)).toEqual(before);
    expect(await statsOf(first.url, ws)).toMatchObject({ rev: 1, files: 1 });
  });

  it("starts once the first was killed outright (SIGKILL): the lock dies with its process", async () => {
    const data = tempDir("serve-lock");
    const first = await serve(data);
    const ws = newWorkspace();
    await pushTree(first.url, ws, { "a.txt": "a\n", "d/b.txt": "b\n" });
    expect(await first.stop("SIGKILL")).toBe(null);

    const next = await serve(data);
    expect(await statsOf(next.url, ws)).toMatchObject({ rev: 1, files: 2 });
    expect(snapshot(await pullTree(next.url, ws))).toMatchObject({
      "a.txt": expect.any(String),
      "d/b.txt": expect.any(String),
    });
    // And it holds the lock in turn.
    expect(serveOnce(data).stderr).toMatch(new RegExp(`^ferry: data_in_use: .*\\(pid ${next.child.pid}, `));
  });
});
