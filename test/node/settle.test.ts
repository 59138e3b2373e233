/**
 * Issue 26 case 5, end to end: `ferry sync --watch` sends a file once it has
 * settled, not in pieces while it is written. A file written slowly reaches
 * the server as one version (the whole file); appends every 100 ms make a
 * few revs, not one each (the first append goes at once: a finished save is
 * sent without waiting, bench:live measures how fast).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { appendFileSync, closeSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspace } from "../../client/workspace/workspace.ts";
import { childrenEndedAfterEach, cliEnv, FERRY_BIN, ferry, ferryAsync, ferryRun, json } from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { pseudoRandom } from "./support/tree.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);

const running = childrenEndedAfterEach();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `ferry sync <dir> --watch` and resolves once its first sync has reported. */
async function startWatch(dir: string, env: NodeJS.ProcessEnv, extra: string[] = []): Promise<ChildProcess> {
  const child = ferryAsync(["sync", dir, "--watch", "--json", "--interval", "200", ...extra], env);
  running.push(child);
  let out = "";
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  await Promise.race([
    new Promise<void>((resolve) => child.stdout?.once("data", () => resolve())),
    new Promise<void>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`ferry sync --watch exited ${code}: ${out}`))),
    ),
  ]);
  return child;
}

/** The sizes of every version of `path` the server keeps, newest first (`ferry log`, from a directory of its own). */
function versions(env: NodeJS.ProcessEnv, path: string): number[] {
  const r = ferry(["log", tempDir("log"), path, "--json"], env);
  if (r.status !== 0) return [];
  return json<{ states: { kind: string; size?: number }[] }>(r).states.map((s) => s.size ?? -1);
}

function sizeOrNull(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null; // not pulled yet
  }
}

/**
 * Writes `content` to `path` a block at a time, `pauseMs` apart, and
 * returns how many times this process stalled `stallMs` or more between
 * two writes: under a loaded machine it can stall as long as a file's
 * quiet, and each such stall may be sent as a version. The file is quiet
 * from the end of one write until the next has written, so a write that
 * itself blocked (a loaded disk) is part of the pause.
 */
async function writeInBlocks(
  path: string,
  content: Uint8Array,
  { block, pauseMs, stallMs }: { block: number; pauseMs: number; stallMs: number },
): Promise<number> {
  const fd = openSync(path, "w");
  let stalls = 0;
  let last = performance.now();
  for (let at = 0; at < content.length; at += block) {
    writeSync(fd, content, at, Math.min(block, content.length - at));
    const now = performance.now();
    if (now - last >= stallMs) stalls++;
    last = now;
    await sleep(pauseMs);
  }
  closeSync(fd);
  return stalls;
}

/** A Node child process running `source`. */
function nodeChild(source: string): ChildProcess {
  return spawn(process.execPath, ["-e", source], { stdio: "ignore" });
}

/** The content of `path` as a fresh host pulls it, or null. */
function pulled(env: NodeJS.ProcessEnv, path: string): Buffer | null {
  const dir = tempDir("probe");
  const r = spawnSync(process.execPath, [FERRY_BIN, "pull", dir, "--memory", "--json"], { env });
  if (r.status !== 0) return null;
  try {
    return readFileSync(join(dir, path));
  } catch {
    return null;
  }
}

describe("ferry sync --watch and a file still being written", () => {
  it("sends a file written slowly once, whole", async () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("settle-slow");
    writeFileSync(join(dir, "seed.txt"), "seed\n");
    await startWatch(dir, env);
    const block = 1024 * 1024;
    const content = pseudoRandom(12 * block, 26);
    // A pause as long as a large file's least quiet (500 ms, settle.ts) is a writer that looks done.
    const stalls = await writeInBlocks(join(dir, "big.bin"), content, { block, pauseMs: 60, stallMs: 450 });
    await until("the whole file on the server", () => pulled(env, "big.bin")?.equals(content) === true);
    // Left alone a while longer: nothing else is sent for it.
    await sleep(2500);
    const sizes = versions(env, "big.bin");
    expect(sizes[0]).toBe(content.length);
    expect(sizes.length, `${stalls} stalls of the writer`).toBeLessThanOrEqual(1 + stalls);
  });

  it("sends a small file flushed in 4 KiB blocks with pauses once, whole", async () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("settle-blocks");
    writeFileSync(join(dir, "seed.txt"), "seed\n");
    await startWatch(dir, env);
    // A buffered writer (stdio, Python) flushing 4 KiB at a time, 30 ms apart: longer than one save's quiet.
    const block = 4096;
    const content = pseudoRandom(16 * block, 30);
    // A pause as long as a block's quiet (100 ms, settle.ts) is a writer that looks done.
    const stalls = await writeInBlocks(join(dir, "out.dat"), content, { block, pauseMs: 30, stallMs: 90 });
    await until("the whole file on the server", () => versions(env, "out.dat")[0] === content.length);
    await sleep(1500);
    const sizes = versions(env, "out.dat");
    expect(sizes[0]).toBe(content.length);
    expect(sizes.length, `${stalls} stalls of the writer; sizes ${sizes}`).toBeLessThanOrEqual(1 + stalls);
  });

  it("never lets another host see a file still being written, from the moment it is opened", async () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("settle-pieces");
    writeFileSync(join(dir, "seed.txt"), "seed\n");
    await startWatch(dir, env);
    const piece = 256 * 1024;
    const content = pseudoRandom(20 * piece, 28);
    // A second host pulls over and over while the file is written, and once after; it notes every size it gets.
    const other = tempDir("settle-other");
    const sizes = new Set<number>();
    let written = false;
    const puller = (async () => {
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        const done = written;
        const r = await ferryRun(["pull", other, "--json"], env);
        expect(r.status, r.stderr).toBe(0);
        const size = sizeOrNull(join(other, "big.bin"));
        if (size !== null) sizes.add(size);
        if (done && size === content.length) return;
      }
    })();
    // Opened (0 B on disk) well before its first write, then written in 20 pieces with pauses.
    const fd = openSync(join(dir, "big.bin"), "w");
    await sleep(150);
    for (let i = 0; i < 20; i++) {
      writeSync(fd, content, i * piece, piece);
      await sleep(50);
    }
    closeSync(fd);
    await until("the whole file on the server", () => versions(env, "big.bin")[0] === content.length);
    written = true;
    await puller;
    expect([...sizes]).toEqual([content.length]);
    // The server never held any other version of it.
    expect(versions(env, "big.bin")).toEqual([content.length]);
  });

  it("leaves out of a one-shot push a file that changes under every read, and sends it once it holds still", async () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("settle-live");
    writeFileSync(join(dir, "seed.txt"), "seed\n");
    const live = join(dir, "live.bin");
    writeFileSync(live, pseudoRandom(64 * 1024 * 1024, 29));
    // Another process appends a line every 2 ms: every read of 64 MiB sees the file move.
    const writer = nodeChild(
      `const fs = require("fs"); const wait = new Int32Array(new SharedArrayBuffer(4));
       for (;;) { fs.appendFileSync(${JSON.stringify(live)}, "one more line\\n"); Atomics.wait(wait, 0, 0, 2); }`,
    );
    running.push(writer);
    const r = await ferryRun(["push", dir], env);
    writer.kill("SIGKILL");
    await new Promise((resolve) => writer.once("exit", resolve));
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toContain("ferry: skipped: live.bin: changed while it was read");
    expect(versions(env, "live.bin")).toEqual([]);
    const again = ferry(["push", dir], env);
    expect(again.status, again.stderr).toBe(0);
    expect(versions(env, "live.bin")).toEqual([statSync(live).size]);
  });

  it("makes a few revs of a file appended to every 100 ms, not one each", async () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("settle-appends");
    writeFileSync(join(dir, "seed.txt"), "seed\n");
    await startWatch(dir, env);
    const line = "one more line of a log\n";
    for (let i = 0; i < 40; i++) {
      appendFileSync(join(dir, "app.log"), line);
      await sleep(100);
    }
    const size = 40 * line.length;
    await until("the last append on the server", () => versions(env, "app.log")[0] === size);
    await sleep(2500);
    const sizes = versions(env, "app.log");
    expect(sizes[0]).toBe(size);
    expect(sizes.length).toBeLessThanOrEqual(3);
  });

  it("sends every append at once with --settle 0", async () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("settle-zero");
    writeFileSync(join(dir, "seed.txt"), "seed\n");
    await startWatch(dir, env, ["--settle", "0"]);
    for (let i = 0; i < 5; i++) {
      appendFileSync(join(dir, "app.log"), `line ${i}\n`);
      await until(`append ${i} on the server`, () => versions(env, "app.log").length === i + 1);
    }
  });

  it("refuses a --settle that is not a whole number of milliseconds", () => {
    const r = ferry(["sync", tempDir("settle-bad"), "--watch", "--settle", "2s"], cliEnv(newWorkspace()));
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("ferry: usage: --settle '2s': expected a whole number of milliseconds\n");
  });

  it("sends a file written without a pause for longer than the maximum, as it is (library: maxSettleMs)", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = tempDir("settle-max");
    const host = openWorkspace(dir, { ...endpointFor(ws), transport: "ws" });
    const stop = new AbortController();
    let started: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      started = resolve;
    });
    const watching = host.watch({ signal: stop.signal, settleMs: 1000, maxSettleMs: 1500, onStarted: () => started() });
    try {
      await ready;
      // Written every 50 ms until the server holds some of it: it never settles, and is sent past the maximum.
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          appendFileSync(join(dir, "live.log"), `line ${i}\n`);
          await sleep(50);
        }
      })();
      let seen = false;
      const deadline = Date.now() + 30_000;
      while (!seen && Date.now() < deadline) {
        await sleep(250);
        const r = await ferryRun(["log", tempDir("log"), "live.log", "--json"], env);
        seen = r.status === 0 && json<{ states: unknown[] }>(r).states.length > 0;
      }
      writing = false;
      await writer;
      expect(seen).toBe(true);
    } finally {
      stop.abort();
      await watching;
      await host.close();
    }
  });
});
