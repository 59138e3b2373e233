/**
 * A directory's first command that fails leaves the folder as it was: no
 * `.ferry/`, no directory it made (found by the tester: a first pull that
 * failed `unavailable` after its hello was answered kept `.ferry/`). The
 * failure here is a real one: a workspace whose bytes are in R2 packs, on
 * a server started again without its bucket (`--no-r2`), so that hello
 * answers and the first download fails; and a server that is down.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, ferryAsync } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { type ServeProcess, startServeProcess } from "./support/serve-process.ts";
import { writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);
const running: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

const listing = (dir: string) => readdirSync(dir).sort();

/** A workspace with bytes in R2, served by a server without its bucket: hello answers, downloads fail. */
async function bytesOutOfReach(): Promise<NodeJS.ProcessEnv> {
  const data = tempDir("first-failure-server");
  const withBucket = await startServeProcess(data);
  const ws = newWorkspace();
  const src = tempDir("first-failure-src");
  // Past SMALL_PUSH_BYTES (32 KiB, protocol/version.ts): a smaller push keeps its bytes in the object's SQLite.
  writeTree(src, { "a.txt": "a".repeat(64 * 1024), "sub/b.txt": "b".repeat(64 * 1024) });
  expect(ferry(["push", src], cliEnv(ws, { FERRY_URL: withBucket.url })).status).toBe(0);
  await withBucket.stop();
  const without = await startServeProcess(data, { args: ["--no-r2"] });
  running.push(without);
  return cliEnv(ws, { FERRY_URL: without.url });
}

/** Runs `ferry sync --watch dir`, waits for it to say the first sync failed, stops it with Ctrl-C. */
async function watchUntilFailed(dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const child = ferryAsync(["sync", "--watch", dir], env);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise((resolve) => child.on("close", resolve));
  await until("the watch to say its first sync failed", () => stderr.includes("unavailable"));
  child.kill("SIGINT");
  await exited;
  return stderr;
}

describe("a directory's first command that fails", () => {
  it("leaves no .ferry/ and no directory it made, when the server answers and then fails", async () => {
    const env = await bytesOutOfReach();
    const parent = tempDir("first-failure");
    const made = join(parent, "made");
    const pull = ferry(["pull", made], env);
    expect([pull.status, pull.stderr]).toEqual([1, expect.stringMatching(/^ferry: unavailable: .*no bucket/)]);
    expect(existsSync(made)).toBe(false);

    const empty = join(parent, "empty");
    mkdirSync(empty);
    for (const verb of ["pull", "sync"]) {
      expect(ferry([verb, empty], env).status, verb).toBe(1);
      expect(listing(empty), verb).toEqual([]);
    }
    const mine = join(parent, "mine");
    writeTree(mine, { "mine.txt": "mine\n" });
    for (const verb of ["push", "sync"]) {
      expect(ferry([verb, mine], env).status, verb).toBe(1);
      expect(listing(mine), verb).toEqual(["mine.txt"]);
    }
    expect(await watchUntilFailed(mine, env)).toMatch(/unavailable: .*no bucket/);
    expect(listing(mine)).toEqual(["mine.txt"]);
  });

  it("leaves no .ferry/ when the server is down", async () => {
    const data = tempDir("first-failure-down");
    const server = await startServeProcess(data, { args: ["--no-r2"] });
    await server.stop();
    const env = cliEnv(newWorkspace(), { FERRY_URL: server.url });
    const mine = tempDir("first-failure-down-dir");
    writeTree(mine, { "mine.txt": "mine\n" });
    for (const verb of ["pull", "push", "sync"]) {
      const r = ferry([verb, mine], env);
      expect([verb, r.status, r.stderr]).toEqual([verb, 1, expect.stringMatching(/^ferry: unavailable: /)]);
      expect(listing(mine), verb).toEqual(["mine.txt"]);
    }
    expect(await watchUntilFailed(mine, env)).toMatch(/unavailable: cannot reach/);
    expect(listing(mine)).toEqual(["mine.txt"]);
  });
});
