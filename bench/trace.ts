/**
 * bench:trace — one push (or push then pull) of a tree into a fresh
 * server, with a per-request timeline (bench/lib/request-trace.ts) and both
 * processes' CPU sampled every 10 ms from /proc (the sum of their threads'
 * run time, schedstat, in ns), to show when the host and the object work
 * at the same time and when they take turns.
 *
 * With --fsync, `perf trace` (Linux perf, root) records the object's
 * fsync and fdatasync calls too: how many, how long the object's thread
 * waited in them, per file. They are the object's waits on the disk (its
 * SQLite commits and checkpoints), which its CPU time does not show.
 *
 *   npm run bench:trace -- [--heavy-tree | DIR] [--pull] [--prof DIR] [--fsync] [--out NAME]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildHost } from "./lib/host-process.ts";
import type { TracedRequest } from "./lib/request-trace.ts";
import { BENCH_DIR } from "./lib/results.ts";
import { BenchServer } from "./lib/server.ts";
import { ThreadStateTally, threadStates } from "./lib/thread-states.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    "heavy-tree": { type: "boolean", default: false },
    pull: { type: "boolean", default: false },
    out: { type: "string", default: "trace" },
    // A V8 CPU profile of each host process into this directory (node --cpu-prof).
    prof: { type: "string" },
    fsync: { type: "boolean", default: false },
  },
});
const tree = values["heavy-tree"] ? join(tmpdir(), "ferry-bench-heavy-tree", "node_modules") : positionals[0];
if (tree === undefined) throw new Error("a tree: --heavy-tree or DIR");

const scratch = mkdtempSync(join(tmpdir(), "ferry-trace-"));
const server = await BenchServer.start(join(scratch, "server"));
try {
  await buildHost();
  const runtime = server.processes().find((p) => p.role === "runtime");
  if (runtime === undefined) throw new Error("no workerd");
  const report: Record<string, unknown> = {};
  report.push = await traced("push", tree, runtime.pid);
  if (values.pull) report.pull = await traced("pull", join(scratch, "dest"), runtime.pid);
  writeFileSync(join(BENCH_DIR, "results", `${values.out}.json`), JSON.stringify(report, null, 1));
} finally {
  await server.stop();
  rmSync(scratch, { recursive: true, force: true });
}

async function traced(op: "push" | "pull", root: string, objectPid: number): Promise<unknown> {
  const file = join(scratch, `${op}-trace.json`);
  const args = ["--root", root, "--store", op === "push" ? "memory" : "disk", "--op", op];
  args.push("--url", server.url, "--workspace", "trace", "--token", server.token());
  const prof = values.prof ? ["--cpu-prof", `--cpu-prof-dir=${values.prof}`, `--cpu-prof-name=${op}.cpuprofile`] : [];
  const child = spawn(process.execPath, [...prof, join(BENCH_DIR, "results", "tmp", "host.mjs"), ...args], {
    env: { ...process.env, FERRY_BENCH_TRACE: file },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  const t0 = performance.now();
  const samples: Sample[] = [];
  const states = { host: new ThreadStateTally(), object: new ThreadStateTally() };
  const objectCpuBefore = threadCpuMs(objectPid);
  const syncs = values.fsync ? traceSyncs(objectPid, join(scratch, `${op}-fsync.txt`)) : null;
  const timer = setInterval(() => {
    if (child.pid === undefined) return;
    const dt = samples.length === 0 ? 0 : performance.now() - (samples[samples.length - 1]?.at ?? 0);
    const objectThreads = threadStates(objectPid);
    states.host.add(threadStates(child.pid), dt);
    states.object.add(objectThreads, dt);
    // The object's main thread (the isolate, its SQLite and its sockets): asleep with nothing to do, or on the disk.
    const main = objectThreads.find((t) => t.thread.endsWith("(main)"))?.state ?? "";
    samples.push({
      objectIdle: main.startsWith("S do_epoll_wait") ? 1 : 0,
      objectDisk: main.startsWith("D") ? 1 : 0,
      at: performance.now(),
      host: runNs(child.pid),
      object: runNs(objectPid),
      hostWait: runNs(child.pid, 1),
      objectWait: runNs(objectPid, 1),
    });
  }, 10);
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  clearInterval(timer);
  const objectThreadCpuMs = minus(threadCpuMs(objectPid), objectCpuBefore);
  const fsync = syncs === null ? null : await syncs();
  if (code !== 0) throw new Error(`host ${op} exited ${code}`);
  const { report } = JSON.parse(stdout.trim().split("\n").pop() ?? "{}") as {
    report: { roundTrips: number; objectBytesSent: number; objectBytesReceived?: number };
  };
  const trace = JSON.parse(readFileSync(file, "utf8")) as { timeOrigin: number; requests: TracedRequest[] };
  // Host times to this process's clock: the host's timeOrigin against ours.
  const shift = trace.timeOrigin - performance.timeOrigin - t0;
  const requests = trace.requests.map((r) => ({
    path: r.path,
    bodyMiB: r.bodyBytes / 2 ** 20,
    start: r.start + shift,
    writeMs: r.finish - r.start,
    serverMs: r.head - r.finish,
    answerMs: r.end - r.head,
    answerMiB: r.answerBytes / 2 ** 20,
  }));
  const cpu = busyOverlap(samples.map((s) => ({ ...s, at: s.at - t0 })));
  const alive = samples.filter((s) => s.host > 0);
  const first = alive[0];
  const last = alive[alive.length - 1];
  // Time runnable but not running: the machine's other load, not this pipeline.
  const runQueueMs = {
    host: first && last ? Math.round((last.hostWait - first.hostWait) / 1e6) : 0,
    object: first && last ? Math.round((last.objectWait - first.objectWait) / 1e6) : 0,
  };
  const wallMs = performance.now() - t0;
  // Neither running nor runnable: waiting on the other side (or on the disk).
  const sleepMs = {
    host: Math.round(wallMs - cpu.totals.hostCpuMs - runQueueMs.host),
    object: Math.round(wallMs - cpu.totals.objectCpuMs - runQueueMs.object),
  };
  const summary = {
    op,
    wallMs: Math.round(wallMs),
    ...cpu.totals,
    runQueueMs,
    sleepMs,
    roundTrips: report.roundTrips,
    objectMiB: (report.objectBytesSent + (report.objectBytesReceived ?? 0)) / 2 ** 20,
  };
  console.log(JSON.stringify(summary));
  printTimeline(requests, cpu.buckets);
  const threads = { host: states.host.rows(), object: states.object.rows(), objectThreadCpuMs };
  printThreads(threads);
  if (fsync !== null) console.log(`object fsyncs: ${JSON.stringify(fsync)}`);
  return { summary, requests, buckets: cpu.buckets, threads, fsync };
}

/** Run time (field 0) or time runnable but waiting for a CPU (field 1) of every thread of `pid`, ns (0 once it is gone). */
function runNs(pid: number, field = 0): number {
  let sum = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        sum += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[field]);
      } catch {}
    }
  } catch {}
  return sum;
}

/**
 * Starts `perf trace` on `pid`'s fsync and fdatasync calls; the returned
 * function stops it and sums them per file (named from /proc while the
 * object still holds them open).
 */
function traceSyncs(pid: number, file: string): () => Promise<Record<string, { calls: number; ms: number }>> {
  const perf = spawn("perf", ["trace", "-e", "fsync,fdatasync", "-p", String(pid), "-o", file], { stdio: "ignore" });
  return async () => {
    const exited = new Promise((resolve) => perf.on("exit", resolve));
    perf.kill("SIGINT");
    await exited;
    const out: Record<string, { calls: number; ms: number }> = {};
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const m = /\(\s*([\d.]+) ms\): \S+ f(?:data)?sync\(fd: (\d+)/.exec(line);
      if (m === null) continue;
      let name = `fd ${m[2]}`;
      try {
        name = readlinkSync(`/proc/${pid}/fd/${m[2]}`).replace(/^.*\//, "");
      } catch {}
      const sum = out[name] ?? { calls: 0, ms: 0 };
      out[name] = { calls: sum.calls + 1, ms: Math.round(sum.ms + Number(m[1])) };
    }
    return out;
  };
}

/** CPU time of each of `pid`'s threads by name (pools summed), ms. */
function threadCpuMs(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        const comm = readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8")
          .trim()
          .replace(/[0-9]+/g, "#");
        const name = task === String(pid) ? `${comm} (main)` : comm;
        const ns = Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
        out[name] = (out[name] ?? 0) + ns / 1e6;
      } catch {}
    }
  } catch {}
  return out;
}

function minus(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, Math.round(v - (before[k] ?? 0))]));
}

function printThreads(threads: {
  host: { thread: string; state: string; ms: number }[];
  object: { thread: string; state: string; ms: number }[];
  objectThreadCpuMs: Record<string, number>;
}): void {
  for (const side of ["host", "object"] as const) {
    console.log(`${side} threads, time per state (sampled every ~10 ms):`);
    for (const r of threads[side]) console.log(`  ${r.thread.padEnd(28)} ${r.state.padEnd(32)} ${r.ms} ms`);
  }
  console.log(`object CPU per thread (ms): ${JSON.stringify(threads.objectThreadCpuMs)}`);
}

interface Sample {
  at: number;
  host: number;
  object: number;
  hostWait: number;
  objectWait: number;
  /** 1 when the object's main thread was asleep in its event loop, or in a disk wait, at this sample. */
  objectIdle: number;
  objectDisk: number;
}
type Bucket = Omit<Sample, "at"> & { at: number };

/** Per 10 ms sample: each side's share of one core; over the run, the time both, one or neither worked. */
function busyOverlap(samples: Sample[]) {
  const totals = { bothMs: 0, hostOnlyMs: 0, objectOnlyMs: 0, neitherMs: 0, hostCpuMs: 0, objectCpuMs: 0 };
  const buckets: Bucket[] = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1] as (typeof samples)[0];
    const b = samples[i] as (typeof samples)[0];
    const dt = b.at - a.at;
    if (b.host < a.host) continue;
    const host = Math.min(1, (b.host - a.host) / 1e6 / dt);
    const object = Math.min(1, (b.object - a.object) / 1e6 / dt);
    totals.hostCpuMs += (b.host - a.host) / 1e6;
    totals.objectCpuMs += (b.object - a.object) / 1e6;
    // Shares of one core, so "both" is the overlap of two intervals of that length within dt.
    const overlap = Math.min(host, object) * dt;
    totals.bothMs += overlap;
    totals.hostOnlyMs += host * dt - overlap;
    totals.objectOnlyMs += object * dt - overlap;
    totals.neitherMs += Math.max(0, dt - (host + object) * dt + overlap);
    const k = Math.floor(b.at / 100);
    const bucket = buckets[k] ?? {
      at: k * 100,
      host: 0,
      object: 0,
      hostWait: 0,
      objectWait: 0,
      objectIdle: 0,
      objectDisk: 0,
    };
    bucket.objectIdle += b.objectIdle;
    bucket.objectDisk += b.objectDisk;
    bucket.hostWait += Math.max(0, b.hostWait - a.hostWait) / 1e6;
    bucket.objectWait += Math.max(0, b.objectWait - a.objectWait) / 1e6;
    bucket.host += (b.host - a.host) / 1e6;
    bucket.object += (b.object - a.object) / 1e6;
    buckets[k] = bucket;
  }
  for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] = Math.round(totals[k]);
  return { totals, buckets: buckets.filter(Boolean) };
}

function printTimeline(
  requests: { path: string; bodyMiB: number; start: number; writeMs: number; serverMs: number; answerMs: number }[],
  buckets: Bucket[],
): void {
  for (const b of buckets) {
    // '#' running, '.' runnable but waiting for a CPU, per 10 ms of the 100 ms bucket.
    const bar = (ms: number, wait: number) =>
      ("#".repeat(Math.round(ms / 10)) + ".".repeat(Math.round(wait / 10))).padEnd(12);
    const events = requests
      .filter((r) => r.start >= b.at && r.start < b.at + 100)
      .map((r) => `${r.path} ${r.bodyMiB.toFixed(1)}M w${r.writeMs.toFixed(0)} s${r.serverMs.toFixed(0)}`);
    console.log(
      `${(b.at / 1000).toFixed(1).padStart(6)} h ${bar(b.host, b.hostWait)} o ${bar(b.object, b.objectWait)} i${b.objectIdle} d${b.objectDisk} ${events.join("; ")}`,
    );
  }
}
