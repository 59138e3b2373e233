/**
 * `ferry sync --watch` from its first moment and for longer than a token
 * lives: the watcher is ready before the first sync scans (a file written as
 * soon as the first sync reports is sent at once, not at the next full
 * rescan), a token the CLI mints itself is minted again before it expires on
 * either transport, and a given token that expires ends the watch with an
 * error that says so.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { signToken } from "../../protocol/token.ts";
import { childrenEndedAfterEach, cliEnv, FERRY_BIN, ferryAsync } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);

const running = childrenEndedAfterEach();

interface Watching {
  readonly child: ChildProcess;
  log(): string;
  exited: Promise<number | null>;
}

/** Starts `ferry sync <dir> --watch` and resolves once its first sync has reported. */
async function startWatch(dir: string, env: NodeJS.ProcessEnv, transport: string): Promise<Watching> {
  const child = ferryAsync(["sync", dir, "--watch", "--json", "--transport", transport, "--interval", "200"], env);
  running.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  await Promise.race([
    new Promise<void>((resolve) => child.stdout?.once("data", () => resolve())),
    exited.then((code) => {
      throw new Error(`ferry sync --watch exited ${code}: ${out}`);
    }),
  ]);
  return { child, log: () => out, exited };
}

/** The server's paths, as a fresh host pulls them (none while the watcher has pushed nothing yet). */
function serverPaths(env: NodeJS.ProcessEnv): string[] {
  const dir = tempDir("probe");
  const r = spawnSync(process.execPath, [FERRY_BIN, "pull", dir, "--memory", "--json"], { env, encoding: "utf8" });
  // A watcher of an empty directory makes the workspace with its first push: under load the probe can come first.
  if (r.status !== 0 && r.stderr.includes("no_such_workspace")) return [];
  if (r.status !== 0) throw new Error(r.stderr);
  return (spawnSync("find", [dir, "-type", "f"], { encoding: "utf8" }).stdout.trim().split("\n") ?? [])
    .filter((p) => p !== "")
    .map((p) => p.slice(dir.length + 1))
    .sort();
}

describe.each(["http", "ws"])("ferry sync --watch over %s", (transport) => {
  it("sends a file written the moment its first sync reports", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = tempDir("watch");
    writeFileSync(join(dir, "seed.txt"), "seed\n");
    await startWatch(dir, env, transport);
    writeFileSync(join(dir, "right-after-start.txt"), "x\n");
    await until("the file on the server", () => serverPaths(env).includes("right-after-start.txt"));
  });

  it("mints its own token again before it expires", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws, { FERRY_TOKEN_TTL: "2" });
    const dir = tempDir("watch");
    await startWatch(dir, env, transport);
    await new Promise((r) => setTimeout(r, 3500));
    writeFileSync(join(dir, "after-the-first-token.txt"), "x\n");
    // The probe mints a token of the usual life: with the watcher's 2 s one, a probe slowed past 2 s by load was refused.
    await until("the file on the server", () => serverPaths(cliEnv(ws)).includes("after-the-first-token.txt"));
  });

  it("stops with a clear error when the token it was given expires", async () => {
    const ws = newWorkspace();
    const token = signToken({ ws, rights: "rw", exp: Math.floor(Date.now() / 1000) + 2 }, inject("ferrySecret"));
    const env = { ...cliEnv(ws), FERRY_TOKEN: token };
    const dir = tempDir("watch");
    const watching = await startWatch(dir, env, transport);
    await new Promise((r) => setTimeout(r, 3000));
    writeFileSync(join(dir, "too-late.txt"), "x\n");
    const code = await Promise.race([watching.exited, new Promise((r) => setTimeout(() => r("running"), 15_000))]);
    expect(code).not.toBe(0);
    expect(code).not.toBe("running");
    expect(watching.log()).toMatch(/given token .*expired/);
  });
});
