/**
 * Where a served replay step's time goes: the replay's served arm
 * (push-replay.ts) with FERRY_TRACE on in the watch and the command, each
 * step's lines printed in ms since the step's timed command began.
 *
 *   npx tsx bench/served-step-trace.ts [steps]
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliSync, timeCommand } from "./lib/cli-process.ts";
import { buildReplaySteps, versionsFrom } from "./lib/replay-steps.ts";
import { ResidentWatch } from "./lib/resident-watch.ts";
import { BenchServer } from "./lib/server.ts";
import { summarize } from "./lib/stats.ts";

const steps = Number(process.argv[2] ?? 6);
const scratch = join(tmpdir(), `served-trace-${process.pid}`);
mkdirSync(scratch, { recursive: true });
const traceFile = join(scratch, "trace.log");
const server = await BenchServer.start(join(scratch, "server"));
try {
  const { name, versions } = versionsFrom("hono@4.13.0", steps);
  const built = buildReplaySteps(name, versions, join(scratch, "replay"));
  const endpoint = { url: server.url, workspace: "served", token: server.token() };
  const work = join(scratch, "work");
  mkdirSync(work);
  const checkout = (dir: string) =>
    timeCommand("rsync", ["-a", "--delete", "--exclude=/.ferry", `${dir}/`, `${work}/`]);
  const first = built[0];
  if (!first) throw new Error("no steps");
  await checkout(first.dir);
  await runCliSync("sync", work, endpoint);
  process.env.FERRY_TRACE = traceFile;
  const watch = await ResidentWatch.start(work, endpoint);
  const pidOf = (pattern: string) =>
    Number(execFileSync("pgrep", ["-f", pattern], { encoding: "utf8" }).trim().split("\n")[0]);
  const watchPid = pidOf(`${work} --watch`);
  const runtimePid = server.processes().find((p) => p.role === "runtime")?.pid ?? 0;
  const cpuOf = (pid: number) => {
    const f = (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  };
  const rows: Record<string, number>[] = [];
  for (const [i, step] of built.entries()) {
    if (i === 0) continue;
    const bare = await timeCommand(process.execPath, ["-e", "0"]);
    watch.pause();
    await checkout(step.dir);
    writeFileSync(traceFile, "");
    const w0 = cpuOf(watchPid);
    const r0 = cpuOf(runtimePid);
    const t0 = Date.now();
    watch.resume();
    const run = await runCliSync("sync", work, endpoint);
    const t1 = Date.now() - t0;
    const w1 = cpuOf(watchPid) - w0;
    const r1 = cpuOf(runtimePid) - r0;
    const all = readFileSync(traceFile, "utf8")
      .split("\n")
      .filter((l) => l !== "");
    const at = (re: RegExp, last = false) => {
      const hits = all.filter((l) => re.test(l));
      const l = last ? hits.at(-1) : hits[0];
      return l ? Number(l.slice(0, l.indexOf(" "))) - t0 : Number.NaN;
    };
    const began = /process began (\d+)/.exec(all.find((l) => l.includes("process began")) ?? "");
    rows.push({
      wall: run.wallMs,
      clientCpu: run.cpuMs,
      watchCpu: w1,
      serverCpu: r1,
      bare: bare.wallMs,
      began: began ? Number(began[1]) - t0 : Number.NaN,
      probe: at(/client probe/),
      connected: at(/client connected/),
      ownBegins: at(/own sync begins/),
      ownEnds: at(/own sync ends/),
      turnBegins: at(/turn begins/),
      turnEnds: at(/turn ends/),
      end: t1,
    });
    // The engine's per-path lines (stamps, pushed paths) left out: the timeline only.
    const lines = all.filter((l) => !/^\d+ (stamped|pushed|sync \w+:)/.test(l));
    console.log(
      `step ${i} ${step.version}: ${step.written} written ${step.deleted} deleted; served ${run.wallMs.toFixed(0)} ms; node -e 0 ${bare.wallMs.toFixed(0)} ms`,
    );
    if (process.env.VERBOSE)
      for (const l of lines) {
        const sp = l.indexOf(" ");
        const m = /process began (\d+)/.exec(l);
        console.log(
          `  ${String(Number(l.slice(0, sp)) - t0).padStart(5)} ${l.slice(sp + 1)}${m ? ` [began at ${Number(m[1]) - t0}]` : ""}`,
        );
      }
    console.log(`  ${String(Date.now() - t0).padStart(5)} (bench saw the command end)`);
    await new Promise((r) => setTimeout(r, 2500));
  }
  await watch.stop();
  const keys = Object.keys(rows[0] ?? {});
  const med = (k: string) => summarize(rows.map((r) => r[k] ?? Number.NaN).filter((x) => !Number.isNaN(x))).median;
  console.log("medians over", rows.length, "steps:");
  for (const k of keys) console.log(`  ${k.padEnd(12)} ${med(k).toFixed(0)}`);
} finally {
  await server.stop();
  rmSync(scratch, { recursive: true, force: true });
}
