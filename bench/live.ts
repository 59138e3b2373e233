/**
 * bench:live — how long a one-file change on host A takes to be on host B's
 * disk, with both hosts running the real CLI (`ferry sync --watch`) against a
 * local server: median and p95 over many writes, loopback. Each sample
 * writes a new small file in A and waits until B holds it with the same
 * bytes (inotify on B's directory, with a 2 ms poll as a backstop).
 *
 *   npm run bench:live [-- --samples 30]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertSameTree, digestTree } from "./lib/digest.ts";
import { markdownTable, REPO_DIR } from "./lib/results.ts";
import { sleep } from "./lib/server.ts";
import { openSession, runSession } from "./lib/session.ts";
import { fmt, percentile, summarize } from "./lib/stats.ts";
import { generateTree } from "./lib/tree.ts";

const session = openSession("live");
const SAMPLES = Math.max(session.samples, session.quick ? 10 : 30);
const BAR_MS = 50;
const TIMEOUT_MS = 15_000;
/**
 * Pause after each arrival, so each sample is one isolated change rather
 * than a stream: the server pokes a socket at most 4 times a second after a
 * burst of 4 (PROTOCOL.md §8.3), so a faster stream waits for the poke rate.
 */
const PACE_MS = 300;

await runSession(session, async () => {
  const server = await session.startServer();
  const a = join(session.tmp, "host-a");
  const b = join(session.tmp, "host-b");
  generateTree(a, 200, 3);
  mkdirSync(join(a, "live"));
  mkdirSync(b);
  const hosts: ChildProcess[] = [];
  try {
    const env = { ...process.env, FERRY_URL: server.url, FERRY_WORKSPACE: "live", FERRY_TOKEN: server.token() };
    const startWatch = async (dir: string) => {
      const child = spawn(
        process.execPath,
        [join(REPO_DIR, "bin/ferry.cjs"), "sync", dir, "--watch", "--json", "--no-progress"],
        {
          cwd: REPO_DIR,
          env,
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      hosts.push(child);
      let err = "";
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
      });
      // The first JSON line is the first full sync's report: from then on the host is watching.
      await new Promise<void>((resolve, reject) => {
        child.stdout?.once("data", () => resolve());
        child.once("exit", (code) => reject(new Error(`ferry sync --watch ${dir} exited ${code}: ${err.trim()}`)));
      });
    };
    await startWatch(a);
    await startWatch(b);
    const deadline = Date.now() + TIMEOUT_MS;
    while (!existsSync(join(b, "live")) && Date.now() < deadline) await sleep(20);
    assertSameTree("host B after its first sync", digestTree(a), digestTree(b));
    session.log("both hosts watching, trees equal");

    const times: number[] = [];
    for (let i = -2; i < SAMPLES; i++) {
      const name = `change-${i + 2}.txt`;
      const content = `sample ${i} ${Date.now()} ${"x".repeat(100)}\n`;
      const t = performance.now();
      writeFileSync(join(a, "live", name), content);
      const ms = await arrival(join(b, "live"), name, content, t);
      if (i >= 0) times.push(ms);
      session.log(`${i < 0 ? "warm-up" : `#${i}`}: ${fmt(ms)} ms`);
      await sleep(PACE_MS);
    }
    const s = summarize(times);
    const p95 = percentile(times, 95);
    const table = markdownTable(
      ["writes", "median ms", "p95 ms", "min", "max"],
      [[times.length, fmt(s.median), fmt(p95), fmt(s.min), fmt(s.max)]],
    );
    const bar = `Bar 7: a one-file change on host A is on host B's disk in under ${BAR_MS} ms (median) — ${fmt(s.median)} ms: ${s.median < BAR_MS ? "met" : "MISSED"}.`;
    const markdown = `${table}\n\n${bar}\n`;
    session.publish(
      {
        times,
        summary: s,
        p95,
        bar,
      },
      markdown,
    );
  } finally {
    for (const h of hosts) h.kill("SIGINT");
    await Promise.all(hosts.map((h) => new Promise((r) => (h.exitCode !== null ? r(null) : h.once("exit", r)))));
  }
});

/** Resolves with ms since `t` once `dir/name` holds `content`. */
function arrival(dir: string, name: string, content: string, t: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const path = join(dir, name);
    const check = () => {
      try {
        if (readFileSync(path, "utf8") === content) {
          done(performance.now() - t);
          return true;
        }
      } catch {
        // not there yet
      }
      return false;
    };
    const watcher = watch(dir, () => check());
    const poll = setInterval(check, 2);
    const timeout = setTimeout(() => {
      cleanup();
      reject(new Error(`${name} did not reach host B within ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    let settled = false;
    const cleanup = () => {
      watcher.close();
      clearInterval(poll);
      clearTimeout(timeout);
    };
    const done = (ms: number) => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve(ms);
    };
    check();
  });
}
