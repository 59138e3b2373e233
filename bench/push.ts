/**
 * bench:push — the first push of a real dependency tree to an empty
 * workspace, its pull into an empty directory, and `rsync -a` of the same
 * tree to an empty directory, side by side in one run. Default tree: this
 * project's own node_modules; any directory by argument; --generate N a
 * generated N-file tree (--quick: 2,000); --real-tree the ~29,000-file
 * node_modules that bench/real-tree/package-lock.json pins (installed once
 * with `npm ci --ignore-scripts` into the system temp dir; needs the npm
 * registry the first time); --heavy-tree the byte-heavy one bench/heavy-tree
 * pins (large native binaries: workerd, next's SWC, biome, esbuild, libvips).
 *
 * Every push is checked against the server (each path's kind, mode, size and
 * chunk list, and every object) and every pull and rsync copy against the
 * source (files, bytes, modes, symlinks) before its time is recorded.
 *
 * --replay <package>@<version> replays the package's consecutive versions
 * instead, with `ferry sync` against `rsync -a --delete` (push-replay.ts).
 *
 * --baseline <git ref> adds "(baseline)" arms: the same push and pull by the
 * host as it was at that commit (against this tree's server), interleaved
 * with the current host's, for a before/after in one run; --only push|pull
 * keeps only that operation's arms (and rsync's). With --baseline-server the
 * baseline push runs against a server of that commit too (its own process,
 * started beside this tree's): a before/after of the object's ingest.
 *
 * The push runs twice per round, side by side: against `ferry serve` with
 * its R2 bucket ("ferry push") and against `ferry serve --no-r2` ("ferry
 * push (without R2)"), each with the object's share of the runtime's CPU
 * (bench/lib/object-cpu.ts).
 *
 *   npm run bench:push [-- DIR | --real-tree | --heavy-tree | --generate 30000] [--samples 5]
 *   npm run bench:push -- --heavy-tree --baseline main --only pull
 *   npm run bench:push -- --replay hono@4.13.0 [--steps 20]
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { checkoutAt } from "./lib/checkout.ts";
import { assertSameTree, digestTree } from "./lib/digest.ts";
import { buildHostAt, type HostArgs, type HostRun, runHost } from "./lib/host-process.ts";
import { FerryHttp } from "./lib/http.ts";
import { waitForSettledInodes } from "./lib/inode-settle.ts";
import { type HeapPeak, IsolateHeap } from "./lib/isolate-heap.ts";
import { meterObjectCpu } from "./lib/object-cpu.ts";
import type { RequestConcurrency } from "./lib/request-timeline.ts";
import { BENCH_DIR, markdownTable, REPO_DIR } from "./lib/results.ts";
import { RSYNC_MISSING, rsyncVersion, timeRsync } from "./lib/rsync.ts";
import type { BenchServer } from "./lib/server.ts";
import { openSession, runSession } from "./lib/session.ts";
import { type Arm, fmt, runAlternating, type Summary, summarize } from "./lib/stats.ts";
import { generateTree } from "./lib/tree.ts";
import { expectTree, verifyServerHolds } from "./lib/verify-server.ts";
import { runReplay } from "./push-replay.ts";

const session = openSession("push", {
  generate: { type: "string" },
  replay: { type: "string" },
  steps: { type: "string" },
  "real-tree": { type: "boolean", default: false },
  "heavy-tree": { type: "boolean", default: false },
  "no-snapshot": { type: "boolean", default: false },
  baseline: { type: "string" },
  "baseline-server": { type: "boolean", default: false },
  only: { type: "string" },
});
const MiB = 2 ** 20;

interface Sample {
  readonly wallMs: number;
  readonly inProcessMs: number | null;
  readonly roundTrips: number | null;
  readonly entriesSent: number | null;
  readonly objectBytesSent: number | null;
  readonly objectBytesReceived: number | null;
  readonly rowsWritten: number | null;
  readonly serverPeakMiB: number | null;
  /** Peak V8 heap of the Worker isolate during the step (the Durable Object's 128 MB is on this). */
  readonly isolateHeap?: HeapPeak | null;
  /** The runtime workerd's resident memory through the step, every 250 ms. */
  readonly rss?: readonly { ms: number; rssMiB: number }[];
  /** CPU ms spent in the step: the host process, the workerd running the object, wrangler's proxy workerd. */
  readonly cpuMs: { readonly host: number; readonly runtime: number; readonly proxy: number } | null;
  /** The object's share of the runtime's CPU ms (bench/lib/object-cpu.ts), pushes only. */
  readonly objectCpuMs?: number;
  readonly mtimeMismatches: number;
  /** Requests in flight while any was, and the time none was (host.ts knows; rsync does not say). */
  readonly concurrency: RequestConcurrency | null;
}

await runSession(session, async () => {
  if (typeof session.values.replay === "string") return runReplay(session, session.values.replay);
  const generate = session.values.generate ? Number(session.values.generate) : session.quick ? 2000 : null;
  const given = session.positionals[0]
    ? resolve(session.positionals[0])
    : session.values["real-tree"] === true
      ? installPinnedTree("real-tree")
      : session.values["heavy-tree"] === true
        ? installPinnedTree("heavy-tree")
        : generate !== null
          ? join(session.tmp, "generated")
          : join(REPO_DIR, "node_modules");
  const generated = given === join(session.tmp, "generated");
  if (generated) generateTree(given, generate ?? 0, 11);
  if (!existsSync(given)) throw new Error(`no such directory: ${given}`);
  // A tree others use may change under the run (vitest writes node_modules/.vite): every arm works on
  // a snapshot taken once (cp -a), which also keeps the pushing host's .ferry store out of the original.
  const snapshot = session.values["no-snapshot"] !== true && !generated;
  const source = snapshot ? join(session.tmp, "source") : given;
  if (snapshot) {
    session.log(`snapshot of ${given} (cp -a)`);
    const cp = spawnSync("cp", ["-a", given, source], { stdio: "inherit" });
    if (cp.status !== 0) throw new Error(`cp -a ${given} failed`);
  }
  const rsync = rsyncVersion();
  if (rsync === null) session.log(RSYNC_MISSING);

  session.log(`reading ${source}`);
  const expected = digestTree(source);
  const expectedOnServer = expectTree(source);
  session.log(
    `${expected.files} files, ${fmt(expected.bytes / MiB)} MiB, ${expected.dirs} dirs, ${expected.symlinks} symlinks, ${expectedOnServer.hashes.length} distinct chunks`,
  );
  // The pushing host keeps its store in <source>/.ferry; one that is already there is not ours to delete.
  const storeWasThere = existsSync(join(source, ".ferry"));
  const pushStore = storeWasThere ? "memory" : "disk";
  if (storeWasThere) session.log(`${source}/.ferry exists: pushing with a memory store`);
  const dropStore = () => {
    if (!storeWasThere) rmSync(join(source, ".ferry"), { recursive: true, force: true });
  };

  const server = await session.startServer("server", { mode: { meterObject: true } });
  const withoutR2 = await session.startServer("sqlite", { mode: { r2: false, meterObject: true } });
  const token = server.token();
  const heap = await IsolateHeap.connect(server);
  const idleMiB = server.processes().find((p) => p.role === "runtime")?.rssKiB ?? 0;
  let pushes = 0;
  let scratch = 0;
  const freshDir = () => {
    const dir = join(session.tmp, `copy-${scratch++}`);
    mkdirSync(dir);
    return dir;
  };
  const host = (args: Omit<HostArgs, "url" | "token">, bundle?: string): Promise<HostRun> =>
    runHost({ ...args, url: server.url, token }, bundle);
  const baselineRef = session.values.baseline;
  const baseline = typeof baselineRef === "string" ? await buildHostAt(baselineRef, session.tmp) : undefined;
  if (baseline) session.log(`baseline host: bench/host.ts at ${baselineRef}`);
  const baselineServer =
    typeof baselineRef === "string" && session.values["baseline-server"] === true
      ? await session.startServer("baseline", {
          repoDir: checkoutAt(baselineRef, join(session.tmp, "baseline-source")),
        })
      : server;
  if (baselineServer !== server) session.log(`baseline push against a server at ${baselineRef}`);

  const pushArm = async (bundle?: string, at: BenchServer = server): Promise<Sample> => {
    const workspace = `push-${pushes++}`;
    const atToken = at.token();
    dropStore();
    at.resetPeaks();
    const cpu = at.cpuMs();
    const rss = at.sampleRss();
    const stopHeap = at === server ? heap?.watch() : undefined;
    const meter = meterObjectCpu(at);
    const run = await runHost(
      { root: source, store: pushStore, op: "push", workspace, url: at.url, token: atToken },
      bundle,
    );
    const sample = {
      ...hostSample(run, at.peakRuntimeMiB(), cpu, at.cpuMs(), 0),
      objectCpuMs: (await meter()).objectMs,
      rss: rss(),
      isolateHeap: (await stopHeap?.()) ?? null,
    };
    dropStore();
    await verifyServerHolds(new FerryHttp(at.url, workspace, atToken), expectedOnServer);
    return sample;
  };
  const pullArm = async (bundle?: string): Promise<Sample> => {
    const dest = freshDir();
    server.resetPeaks();
    const cpu = server.cpuMs();
    const rss = server.sampleRss();
    const stopHeap = heap?.watch();
    const run = await host({ root: dest, store: "disk", op: "pull", workspace: "push-reference" }, bundle);
    const peak = server.peakRuntimeMiB();
    const cpuAfter = server.cpuMs();
    const rssSamples = rss();
    const isolateHeap = (await stopHeap?.()) ?? null;
    // Kept until the session ends: deleting it here would slow the next arm's file creation (inode-settle.ts).
    const diff = assertSameTree(`pull into ${dest}`, expected, digestTree(dest));
    return { ...hostSample(run, peak, cpu, cpuAfter, diff.mtimeMismatches), rss: rssSamples, isolateHeap };
  };
  const rsyncArm = async (): Promise<Sample> => {
    const dest = freshDir();
    const wallMs = await timeRsync(source, dest);
    const diff = assertSameTree(`rsync -a into ${dest}`, expected, digestTree(dest));
    return { ...emptySample(), wallMs, mtimeMismatches: diff.mtimeMismatches };
  };

  // --quick (npm run bench) probes but does not wait: its figures are a smoke test, never published.
  const settle = await waitForSettledInodes(session.tmp, session.log, session.quick ? 0 : undefined);
  session.log(`file creation: ${fmt(settle.usPerFile, 0)} µs/file after ${fmt(settle.waitedMs / 1000, 0)} s`);
  session.log("reference push (also checks the server holds the tree)");
  dropStore();
  // The first push on a fresh server: its memory is the cleanest figure (later steps share the process with earlier workspaces).
  server.resetPeaks();
  const referenceRss = server.sampleRss();
  const referenceHeap = heap?.watch();
  const reference = await host({ root: source, store: pushStore, op: "push", workspace: "push-reference" });
  const referencePeakMiB = server.peakRuntimeMiB();
  const referenceRssSamples = referenceRss();
  const referenceHeapPeak = (await referenceHeap?.()) ?? null;
  dropStore();
  await verifyServerHolds(new FerryHttp(server.url, "push-reference", token), expectedOnServer);
  session.log(`reference push ${fmt(reference.wallMs)} ms`);

  const only = session.values.only;
  const ferryArms: Arm<Sample>[] = [
    { name: "ferry push", run: () => pushArm() },
    { name: "ferry push (without R2)", run: () => pushArm(undefined, withoutR2) },
    ...(baseline ? [{ name: "ferry push (baseline)", run: () => pushArm(baseline, baselineServer) }] : []),
    { name: "ferry pull", run: () => pullArm() },
    ...(baseline ? [{ name: "ferry pull (baseline)", run: () => pullArm(baseline) }] : []),
  ];
  const arms: Arm<Sample>[] = [
    ...ferryArms.filter((a) => typeof only !== "string" || a.name.startsWith(`ferry ${only}`)),
    ...(rsync ? [{ name: "rsync -a", run: rsyncArm }] : []),
  ];
  const results = await runAlternating(arms, {
    samples: session.samples,
    warmup: session.warmup,
    onSample: (arm, round, s) => session.log(`${arm} #${round}: ${fmt((s as Sample).wallMs)} ms`),
  });

  const rsyncMedian = rsync ? summarize((results.get("rsync -a") ?? []).map((s) => s.wallMs)).median : null;
  const rows = arms.map((arm) => {
    const samples = results.get(arm.name) ?? [];
    const wall = summarize(samples.map((s) => s.wallMs));
    const first = samples[0];
    return {
      arm: arm.name,
      wall,
      inProcess: first?.inProcessMs === null ? null : summarize(samples.map((s) => s.inProcessMs ?? 0)),
      filesPerSecond: expected.files / (wall.median / 1000),
      mibPerSecond: expected.bytes / MiB / (wall.median / 1000),
      ratioToRsync: rsyncMedian ? wall.median / rsyncMedian : null,
      roundTrips: first?.roundTrips ?? null,
      entriesSent: first?.entriesSent ?? null,
      objectBytesSent: first?.objectBytesSent ?? null,
      objectBytesReceived: first?.objectBytesReceived ?? null,
      rowsWritten: first?.rowsWritten ?? null,
      isolateHeapPeakMiB: samples.some((s) => s.isolateHeap)
        ? Math.max(...samples.map((s) => s.isolateHeap?.usedMiB ?? 0))
        : null,
      serverPeakMiB: samples.some((s) => s.serverPeakMiB !== null)
        ? Math.max(...samples.map((s) => s.serverPeakMiB ?? 0))
        : null,
      cpuMs: first?.cpuMs
        ? {
            host: summarize(samples.map((s) => s.cpuMs?.host ?? 0)).median,
            runtime: summarize(samples.map((s) => s.cpuMs?.runtime ?? 0)).median,
            proxy: summarize(samples.map((s) => s.cpuMs?.proxy ?? 0)).median,
            object: summarize(samples.map((s) => s.objectCpuMs ?? Number.NaN)).median,
          }
        : null,
      mtimeMismatches: first?.mtimeMismatches ?? 0,
      inFlight: first?.concurrency
        ? {
            mean: summarize(samples.map((s) => s.concurrency?.meanInFlight ?? 0)).median,
            max: Math.max(...samples.map((s) => s.concurrency?.maxInFlight ?? 0)),
            idleMs: summarize(samples.map((s) => s.concurrency?.idleMs ?? 0)).median,
          }
        : null,
      samples,
    };
  });

  const dash = (v: number | null, f: (n: number) => string = (n) => n.toLocaleString("en-US")) =>
    v === null ? "—" : f(v);
  const table = markdownTable(
    [
      "",
      "median s (min–max)",
      "files/s",
      "MiB/s",
      "× rsync",
      "requests in flight: mean / max",
      "no request in flight s",
      "round trips",
      "entries sent",
      "object MiB sent / received",
      "rows written",
      "server peak MiB: isolate heap / workerd RSS",
      "CPU s: host / object's workerd (the object's share) / proxy",
    ],
    rows.map((r) => [
      r.arm,
      `${fmt(r.wall.median / 1000)} (${fmt(r.wall.min / 1000)}–${fmt(r.wall.max / 1000)})`,
      fmt(r.filesPerSecond, 0),
      fmt(r.mibPerSecond, 1),
      dash(r.ratioToRsync, (n) => `${fmt(n)}x`),
      r.inFlight ? `${fmt(r.inFlight.mean)} / ${r.inFlight.max}` : "—",
      r.inFlight ? fmt(r.inFlight.idleMs / 1000) : "—",
      dash(r.roundTrips),
      dash(r.entriesSent),
      r.objectBytesSent === null
        ? "—"
        : `${fmt((r.objectBytesSent ?? 0) / MiB, 1)} / ${fmt((r.objectBytesReceived ?? 0) / MiB, 1)}`,
      dash(r.rowsWritten),
      r.serverPeakMiB === null
        ? "—"
        : `${r.isolateHeapPeakMiB === null ? "n/a" : fmt(r.isolateHeapPeakMiB, 0)} / ${fmt(r.serverPeakMiB, 0)}`,
      r.cpuMs
        ? `${fmt(r.cpuMs.host / 1000)} / ${fmt(r.cpuMs.runtime / 1000)}${Number.isNaN(r.cpuMs.object) ? "" : ` (${fmt(r.cpuMs.object / 1000)})`} / ${fmt(r.cpuMs.proxy / 1000)}`
        : "—",
    ]),
  );
  const tree = `${expected.files.toLocaleString("en-US")} files, ${fmt(expected.bytes / MiB, 1)} MiB, ${expected.dirs.toLocaleString("en-US")} dirs, ${expected.symlinks} symlinks (${describeTree(given)})`;
  const bars = [...barVerdicts(rows, rsync !== null), ...r2Verdicts(rows, expected.bytes / MiB)];
  const markdown = `Tree: ${tree}. The object's workerd: ${fmt(idleMiB / 1024, 0)} MiB resident when idle, ${fmt(referencePeakMiB, 0)} MiB at peak during the first push on the fresh server (${fmt(reference.wallMs / 1000)} s), when the Worker isolate's V8 heap peaked at ${referenceHeapPeak ? `${fmt(referenceHeapPeak.usedMiB, 0)} MiB used (${fmt(referenceHeapPeak.totalMiB, 0)} MiB reserved)` : "n/a"}. The process peaks in the table come later, with earlier workspaces' objects still in the process. File creation before timing: ${fmt(settle.usPerFile, 0)} µs per 4 KiB file${settle.settled ? "" : " (NOT settled: recently deleted inodes slow every arm that creates files)"}; nothing is deleted during the run.\n\n${table}\n\n${bars.join("\n")}\n`;
  session.publish(
    {
      source: given,
      snapshot,
      tree: { files: expected.files, bytes: expected.bytes, dirs: expected.dirs, symlinks: expected.symlinks },
      chunks: expectedOnServer.hashes.length,
      rsync,
      pushStore,
      fileCreation: settle,
      reference: {
        wallMs: reference.wallMs,
        // Counts only: the per-path lists (9,949 entries for the heavy tree) made each result file ~1 MiB.
        report: { ...reference.result.report, sent: undefined, received: undefined },
        serverPeakMiB: referencePeakMiB,
        isolateHeap: referenceHeapPeak,
        rss: referenceRssSamples,
      },
      serverIdleMiB: idleMiB / 1024,
      rows,
      bars,
    },
    markdown,
  );
  heap?.close();
});

function describeTree(dir: string): string {
  if (dir === join(REPO_DIR, "node_modules")) return "this project's node_modules";
  if (dir === join(tmpdir(), "ferry-bench-real-tree", "node_modules")) return "bench/real-tree's pinned npm install";
  if (dir === join(tmpdir(), "ferry-bench-heavy-tree", "node_modules")) return "bench/heavy-tree's pinned npm install";
  return dir === join(session.tmp, "generated") ? "generated" : dir;
}

/** A pinned tree's node_modules (bench/real-tree or bench/heavy-tree), installed on first use and kept for later runs. */
function installPinnedTree(name: "real-tree" | "heavy-tree"): string {
  const dir = join(tmpdir(), `ferry-bench-${name}`);
  if (!existsSync(join(dir, "node_modules", ".package-lock.json"))) {
    mkdirSync(dir, { recursive: true });
    for (const f of ["package.json", "package-lock.json"]) copyFileSync(join(BENCH_DIR, name, f), join(dir, f));
    session.log(`installing bench/${name} into ${dir} (npm ci --ignore-scripts)`);
    const npm = spawnSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: dir,
      stdio: "inherit",
    });
    if (npm.status !== 0) throw new Error(`npm ci of bench/${name} failed (it needs the npm registry)`);
  }
  return join(dir, "node_modules");
}

function hostSample(
  run: HostRun,
  peak: number,
  cpuBefore: { runtime: number; proxy: number },
  cpuAfter: { runtime: number; proxy: number },
  mtimeMismatches: number,
): Sample {
  const r = run.result.report;
  return {
    cpuMs: {
      host: run.result.cpuMs,
      runtime: cpuAfter.runtime - cpuBefore.runtime,
      proxy: cpuAfter.proxy - cpuBefore.proxy,
    },
    wallMs: run.wallMs,
    inProcessMs: run.result.ms.inProcess,
    roundTrips: r.roundTrips,
    entriesSent: r.entriesSent,
    objectBytesSent: r.objectBytesSent,
    objectBytesReceived: r.objectBytesReceived,
    rowsWritten: run.result.rows.rowsWritten,
    serverPeakMiB: peak,
    mtimeMismatches,
    concurrency: run.result.concurrency,
  };
}

function emptySample(): Sample {
  return {
    wallMs: 0,
    inProcessMs: null,
    roundTrips: null,
    entriesSent: null,
    objectBytesSent: null,
    objectBytesReceived: null,
    rowsWritten: null,
    serverPeakMiB: null,
    cpuMs: null,
    mtimeMismatches: 0,
    concurrency: null,
  };
}

/** Bar 10 on this tree: the object's CPU per MiB with R2 against without, and the whole push's time. */
function r2Verdicts(
  rows: readonly { arm: string; wall: Summary; cpuMs: { object: number } | null }[],
  mib: number,
): string[] {
  const withR2 = rows.find((r) => r.arm === "ferry push");
  const without = rows.find((r) => r.arm === "ferry push (without R2)");
  if (!withR2?.cpuMs || !without?.cpuMs) return [];
  const perMiB = (r: { cpuMs: { object: number } | null }) => (r.cpuMs?.object ?? Number.NaN) / mib;
  const cpu = perMiB(withR2) / perMiB(without);
  const wall = withR2.wall.median / without.wall.median;
  return [
    `Bar 10 on this tree: the object's CPU ${fmt(perMiB(withR2))} ms/MiB with R2, ${fmt(perMiB(without))} without: ` +
      `${fmt(cpu, 2)}x (${cpu <= 1 / 3 ? "met" : "MISSED"}, at most 1/3); the whole push ${fmt(wall, 2)}x the time ` +
      `without R2 (${wall <= 1 ? "met" : "MISSED"}, no slower). Load at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(", ")}.`,
  ];
}

function barVerdicts(
  rows: readonly { arm: string; wall: Summary; ratioToRsync: number | null }[],
  haveRsync: boolean,
): string[] {
  if (!haveRsync) return [`Bars 3 and 4 not measured: ${RSYNC_MISSING}`];
  return ["ferry push", "ferry pull"].map((arm, i) => {
    const r = rows.find((x) => x.arm === arm);
    const ratio = r?.ratioToRsync ?? Number.NaN;
    return `Bar ${3 + i}: ${arm} at most the time of rsync -a — ${fmt(ratio)}x rsync's median: ${ratio <= 1 ? "met" : "MISSED"}.`;
  });
}
