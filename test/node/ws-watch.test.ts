import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferryAsync } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { RestartableServer } from "./support/restartable-server.ts";
import { healthOnNewConnection } from "./support/serve-process.ts";
import { settledSnapshot, snapshot } from "./support/tree.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);

const running: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map(stop));
});

/** Starts `ferry sync <dir> --watch` and resolves once its first sync has reported. */
async function startWatch(dir: string, env: NodeJS.ProcessEnv): Promise<ChildProcess & { log: () => string }> {
  const child = ferryAsync(["sync", dir, "--watch", "--json"], env);
  running.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`ferry sync --watch exited ${code}: ${out}`)));
  });
  return Object.assign(child, { log: () => out });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

describe("ferry sync --watch over WebSocket", () => {
  it("keeps two directories identical while both sides create, edit, rename and delete", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const a = tempDir("watch-a");
    const b = tempDir("watch-b");
    writeFileSync(join(a, "seed.txt"), "seed\n");
    await startWatch(a, env);
    await startWatch(b, env);
    await until("the seed on b", () => read(join(b, "seed.txt")) === "seed\n");

    writeFileSync(join(a, "from-a.txt"), "written on a\n");
    await until("a's new file on b", () => read(join(b, "from-a.txt")) === "written on a\n");

    rmSync(join(b, "from-a.txt"));
    await until("b's delete on a", () => !existsSync(join(a, "from-a.txt")));

    writeFileSync(join(b, "seed.txt"), "edited on b\n");
    await until("b's edit on a", () => read(join(a, "seed.txt")) === "edited on b\n");

    renameSync(join(a, "seed.txt"), join(a, "renamed.txt"));
    await until(
      "a's rename on b",
      () => read(join(b, "renamed.txt")) === "edited on b\n" && !existsSync(join(b, "seed.txt")),
    );

    mkdirSync(join(b, "dir/sub"), { recursive: true });
    for (let i = 0; i < 20; i++) writeFileSync(join(b, `dir/sub/f${i}.txt`), `burst ${i}\n`);
    await until("b's burst on a", () => read(join(a, "dir/sub/f19.txt")) === "burst 19\n");

    await until("identical trees", () => {
      const [inA, inB] = [settledSnapshot(a), settledSnapshot(b)];
      return inA !== null && JSON.stringify(inA) === JSON.stringify(inB);
    });
    expect(snapshot(a)).toEqual(snapshot(b));
  });

  it("keeps working after the server restarts", async () => {
    const persist = tempDir("watch-server");
    const server = await RestartableServer.start(persist);
    try {
      const ws = newWorkspace();
      const env = cliEnv(ws, { FERRY_URL: server.url });
      const a = tempDir("watch-a");
      const b = tempDir("watch-b");
      await startWatch(a, env);
      await startWatch(b, env);
      writeFileSync(join(a, "before.txt"), "before the restart\n");
      await until("a file before the restart", () => read(join(b, "before.txt")) === "before the restart\n");

      await server.stop();
      // On a connection of node:http's own, not fetch's: this is this process's first HTTP
      // request, and the first fetch of a Node 20 process (undici 6) waits for its parser's
      // WebAssembly compile after connecting; a reset that closes the socket meanwhile is
      // never seen, and the fetch never settles (it hung this test to its timeout under load).
      await expect(healthOnNewConnection(server.url)).rejects.toThrow();
      await server.restart(persist);

      writeFileSync(join(a, "after.txt"), "after the restart\n");
      await until("a file after the restart", () => read(join(b, "after.txt")) === "after the restart\n", 30_000);
      rmSync(join(b, "before.txt"));
      await until("a delete after the restart", () => !existsSync(join(a, "before.txt")), 30_000);
    } finally {
      await server.close();
    }
  }, 90_000);
});
