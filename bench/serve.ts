/**
 * bench:serve — what taking wrangler's dev proxy out of the request path
 * buys: the same host operations against `ferry serve` (clients on workerd's
 * own socket) and against `wrangler dev` (a second workerd proxying in front),
 * side by side in one run, arms alternated each round.
 *
 * For one generated tree (default 3,000 files), each server gets it pushed
 * once by a persisted host; then each sample, per server:
 * - `restore`: that host's store reopened in a new process (bar 1: one round
 *   trip, no entries, no bytes), timed in process and whole process;
 * - `push`: a new host pushes the tree to a new workspace;
 * - `pull`: a new host pulls that workspace into an empty directory, verified
 *   against the source tree by digest.
 * - `roundtrip`: 50 sequential hellos from this process through the CLI's
 *   transport on one kept-alive connection; the median of one (a proxy hop's cost).
 * Each sample also reads the server's workerd CPU time (proxy and runtime).
 *
 *   npm run bench:serve [-- --files 3000 --samples 5 --ops roundtrip,restore,push,pull]
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { HttpTransport } from "../client/transport/http-transport.ts";
import { PROTOCOL_VERSION } from "../protocol/version.ts";
import { assertSameTree, digestTree } from "./lib/digest.ts";
import { type HostArgs, type HostRun, runHost } from "./lib/host-process.ts";
import { markdownTable } from "./lib/results.ts";
import type { BenchServer, ServerKind } from "./lib/server.ts";
import { openSession, runSession } from "./lib/session.ts";
import { type Arm, fmt, runAlternating, type Summary, summarize } from "./lib/stats.ts";
import { generateTree } from "./lib/tree.ts";

const session = openSession("serve", { files: { type: "string" }, ops: { type: "string" } });
const files = Number(session.values.files ?? (session.quick ? 500 : 3000));
const KINDS: readonly ServerKind[] = ["ferry", "wrangler"];
const ALL_OPS = ["roundtrip", "restore", "push", "pull"] as const;
type Op = (typeof ALL_OPS)[number];
const OPS = String(session.values.ops ?? ALL_OPS.join(","))
  .split(",")
  .map((op) => {
    if (!(ALL_OPS as readonly string[]).includes(op)) throw new Error(`--ops: some of ${ALL_OPS.join(",")}`);
    return op as Op;
  });
/** Sequential hellos per `roundtrip` sample, on one kept-alive connection, as a host's requests go. */
const HELLOS = 50;

interface Sample {
  readonly inProcessMs: number;
  readonly wallMs: number;
  readonly roundTrips: number;
  readonly entries: number;
  readonly objectBytes: number;
  /** workerd CPU this sample cost the server, by process role. */
  readonly runtimeCpuMs: number;
  readonly proxyCpuMs: number;
}

await runSession(session, async () => {
  // One copy of the tree per server (the same seed), each with its own persisted host store in it.
  const roots = new Map<ServerKind, string>(KINDS.map((kind) => [kind, join(session.tmp, `tree-${kind}`)]));
  const source = roots.get("ferry") as string;
  const tree = generateTree(source, files, 11);
  generateTree(roots.get("wrangler") as string, files, 11);
  const digest = digestTree(source);
  assertSameTree("the two copies of the tree", digest, digestTree(roots.get("wrangler") as string));
  session.log(`${files} files, ${fmt(tree.bytes / 2 ** 20)} MiB`);
  const servers = new Map<ServerKind, BenchServer>();
  for (const kind of KINDS) servers.set(kind, await session.startServer(`${kind}-server`, { kind }));

  // The persisted host each server restores: one first push per server, checked by the server's counts.
  for (const [kind, server] of servers) {
    const root = roots.get(kind) as string;
    const run = await runHost(hostArgs(server, root, "restore-ws", "disk", "push"));
    // A push-only run leaves the pull cursor behind its own rev: one restore brings it level.
    await runHost(hostArgs(server, root, "restore-ws", "disk", "restore"));
    session.log(`${kind}: first push ${fmt(run.wallMs)} ms`);
  }

  let serial = 0;
  const sample = async (kind: ServerKind, op: Op): Promise<Sample> => {
    const server = servers.get(kind) as BenchServer;
    const n = serial++;
    const before = server.cpuMs();
    if (op === "roundtrip") return helloRoundTrips(server, before);
    let run: HostRun;
    if (op === "restore") {
      run = await runHost(hostArgs(server, roots.get(kind) as string, "restore-ws", "disk", "restore"));
      const r = run.result.report;
      if (r.roundTrips !== 1 || r.entriesSent + r.entriesReceived !== 0 || r.objectBytesReceived !== 0) {
        const counts = `${r.mode}, ${r.roundTrips} round trips, ${r.entriesSent}/${r.entriesReceived} entries sent/received`;
        throw new Error(`${kind}: a restore that was not a no-op: ${counts}`);
      }
    } else {
      const workspace = `copy-${n}`;
      const pullInto = join(session.tmp, `push-${n}`);
      // A push is a new in-memory host over the source tree; a pull, a new one over an empty directory.
      if (op === "push") run = await runHost(hostArgs(server, source, workspace, "memory", "push"));
      else {
        await runHost(hostArgs(server, source, workspace, "memory", "push"));
        mkdirSync(pullInto);
        const cpuAfterPush = server.cpuMs();
        run = await runHost(hostArgs(server, pullInto, workspace, "memory", "pull"));
        assertSameTree(`pull from ${kind}`, digest, digestTree(pullInto));
        rmSync(pullInto, { recursive: true, force: true });
        return toSample(run, server.cpuMs(), cpuAfterPush);
      }
    }
    return toSample(run, server.cpuMs(), before);
  };

  const results = new Map<string, Sample[]>();
  for (const op of OPS) {
    const arms: Arm<Sample>[] = KINDS.map((kind) => ({ name: `${op} ${kind}`, run: () => sample(kind, op) }));
    const got = await runAlternating(arms, {
      samples: session.samples,
      warmup: session.warmup,
      onSample: (arm, round, s) =>
        session.log(
          `${arm} #${round}: ${fmt((s as Sample).inProcessMs)} ms in process, ${fmt((s as Sample).wallMs)} ms whole`,
        ),
    });
    for (const [name, samples] of got) results.set(name, samples);
  }

  const rows = OPS.flatMap((op) => {
    const f = summaryOf(results.get(`${op} ferry`) ?? []);
    const w = summaryOf(results.get(`${op} wrangler`) ?? []);
    if (op === "roundtrip") {
      return [
        [op, "one hello, median ms", cell(f.inProcess), cell(w.inProcess), ratio(w.inProcess, f.inProcess)],
        [op, `${HELLOS} hellos, server CPU ms (runtime + proxy)`, cpuCell(f), cpuCell(w), ratio(w.cpu, f.cpu)],
      ];
    }
    return [
      [op, "in process, ms", cell(f.inProcess), cell(w.inProcess), ratio(w.inProcess, f.inProcess)],
      [op, "whole process, ms", cell(f.wall), cell(w.wall), ratio(w.wall, f.wall)],
      [op, "server CPU, ms (runtime + proxy)", cpuCell(f), cpuCell(w), ratio(w.cpu, f.cpu)],
      [op, "round trips / entries / object bytes", counts(f), counts(w), ""],
    ];
  });
  const table = markdownTable(["op", "measure", "ferry serve", "wrangler dev", "wrangler / ferry"], rows);
  const markdown = `${files} files (${fmt(tree.bytes / 2 ** 20)} MiB); medians of ${session.samples} samples (min-max), arms alternated.\n\n${table}\n`;
  session.publish(
    {
      files,
      tree,
      results: Object.fromEntries(results),
    },
    markdown,
  );
});

/** The median time of one hello round trip through the CLI's transport, in this process: what a proxy hop adds. */
async function helloRoundTrips(server: BenchServer, cpuBefore: { runtime: number; proxy: number }): Promise<Sample> {
  const transport = new HttpTransport({ url: server.url, workspace: "roundtrip", token: server.token() });
  const hostId = crypto.getRandomValues(new Uint8Array(16));
  const hello = { version: PROTOCOL_VERSION, hostId, hostRev: 0, capabilities: [] };
  const times: number[] = [];
  const t0 = performance.now();
  try {
    for (let i = 0; i < HELLOS; i++) {
      const t = performance.now();
      await transport.call("hello", hello);
      times.push(performance.now() - t);
    }
  } finally {
    await transport.close();
  }
  const cpu = server.cpuMs();
  return {
    inProcessMs: summarize(times).median,
    wallMs: performance.now() - t0,
    roundTrips: HELLOS,
    entries: 0,
    objectBytes: 0,
    runtimeCpuMs: cpu.runtime - cpuBefore.runtime,
    proxyCpuMs: cpu.proxy - cpuBefore.proxy,
  };
}

function hostArgs(
  server: BenchServer,
  root: string,
  workspace: string,
  store: "disk" | "memory",
  op: HostArgs["op"],
): HostArgs {
  return { root, url: server.url, workspace, token: server.token(), store, op };
}

function toSample(
  run: HostRun,
  cpuNow: { runtime: number; proxy: number },
  cpuBefore: { runtime: number; proxy: number },
): Sample {
  const r = run.result.report;
  return {
    inProcessMs: run.result.ms.inProcess,
    wallMs: run.wallMs,
    roundTrips: r.roundTrips,
    entries: r.entriesSent + r.entriesReceived,
    objectBytes: r.objectBytesSent + r.objectBytesReceived,
    runtimeCpuMs: cpuNow.runtime - cpuBefore.runtime,
    proxyCpuMs: cpuNow.proxy - cpuBefore.proxy,
  };
}

interface ArmSummary {
  readonly inProcess: Summary;
  readonly wall: Summary;
  readonly cpu: Summary;
  readonly runtimeCpu: Summary;
  readonly proxyCpu: Summary;
  readonly last: Sample | undefined;
}

function summaryOf(samples: readonly Sample[]): ArmSummary {
  return {
    inProcess: summarize(samples.map((s) => s.inProcessMs)),
    wall: summarize(samples.map((s) => s.wallMs)),
    cpu: summarize(samples.map((s) => s.runtimeCpuMs + s.proxyCpuMs)),
    runtimeCpu: summarize(samples.map((s) => s.runtimeCpuMs)),
    proxyCpu: summarize(samples.map((s) => s.proxyCpuMs)),
    last: samples.at(-1),
  };
}

function cell(s: Summary): string {
  return `${fmt(s.median)} (${fmt(s.min)}-${fmt(s.max)})`;
}

function cpuCell(a: ArmSummary): string {
  return `${fmt(a.cpu.median, 0)} (${fmt(a.runtimeCpu.median, 0)} + ${fmt(a.proxyCpu.median, 0)})`;
}

function counts(a: ArmSummary): string {
  const s = a.last;
  return s === undefined ? "" : `${s.roundTrips} / ${s.entries} / ${s.objectBytes}`;
}

function ratio(slow: Summary, fast: Summary): string {
  return fast.median > 0 ? `${fmt(slow.median / fast.median)}x` : "";
}
