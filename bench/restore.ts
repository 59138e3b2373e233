/**
 * bench:restore — how long a host waits after a restart to be in sync again,
 * against tree size (500, 3,000, 30,000 generated files). For each size the
 * tree is pushed once; then every sample is a new host process on:
 *
 * - `persisted, restore`: the store that pushed it, reopened (`sync` without
 *   a rescan: the store vouches for the disk). Bar 1: one round trip, no
 *   entries, no object bytes, flat in tree size.
 * - `persisted, sync`: the same store, rescanning the tree first (`ferry sync`).
 * - `memory (lost store)`: a new in-memory store over the unchanged tree. Bar 2:
 *   sends only what differs (here nothing).
 * - `ferry sync (CLI)`: what users run, the `ferry` command itself on the
 *   persisted store, rescan included, whole process; beside it the floors it
 *   is held to, `node -e 0` (bar: at most 2x at 3,000 files) and `rsync -a`
 *   of the unchanged tree onto a copy of it (bar: no slower at 30,000).
 *
 * and, in a second variant, the server process is restarted before each
 * sample too. Times are whole-process (spawn to exit) and in-process (store
 * open to in sync). Each sample is verified: a new pid, the store reopened
 * (same host id) or lost (a new one), and a new server pid when restarted.
 *
 * --experiment adds an arm whose transport runs over the global fetch
 * (undici) instead of the CLI's node:http, to show what the first fetch of a
 * process costs a one-round-trip restore.
 *
 *   npm run bench:restore [-- --sizes 500,3000,30000 --samples 5 --no-server-restart --experiment]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { lineChartSvg } from "./lib/chart.ts";
import { runCliSync, timeCommand, timeNodeBare } from "./lib/cli-process.ts";
import { assertSameTree, digestTree } from "./lib/digest.ts";
import { type HostArgs, type HostRun, runHost } from "./lib/host-process.ts";
import { FerryHttp } from "./lib/http.ts";
import { markdownTable, RESULTS_DIR } from "./lib/results.ts";
import { RSYNC_MISSING, rsyncVersion } from "./lib/rsync.ts";
import type { BenchServer } from "./lib/server.ts";
import { openSession, parseSizes, runSession } from "./lib/session.ts";
import { type Arm, fmt, runAlternating, type Summary, summarize } from "./lib/stats.ts";
import { generateTree } from "./lib/tree.ts";

const session = openSession("restore", {
  sizes: { type: "string" },
  "no-server-restart": { type: "boolean", default: false },
  experiment: { type: "boolean", default: false },
});
const sizes = parseSizes(String(session.values.sizes ?? (session.quick ? "500,3000" : "500,3000,30000")));
const withServerRestart = session.values["no-server-restart"] !== true && !session.quick;

interface ArmSpec {
  readonly name: string;
  /** `host`: bench/host.ts on the library (default); `cli`: the ferry command; `node`, `rsync`: the yardsticks. */
  readonly runner?: "cli" | "node" | "rsync";
  readonly store: "disk" | "memory";
  readonly op: "restore" | "sync";
  readonly serverRestart: boolean;
  readonly fetch?: "global";
}
const EXPERIMENT: ArmSpec = {
  name: "persisted, restore, global fetch (comparison)",
  store: "disk",
  op: "restore",
  serverRestart: false,
  fetch: "global",
};
const CLI_ARM = "ferry sync (CLI, rescan)";
const NODE_ARM = "node -e 0";
const RSYNC_ARM = "rsync -a, unchanged tree";
const haveRsync = rsyncVersion() !== null;
const ARMS: readonly ArmSpec[] = [
  ...(session.values.experiment === true ? [EXPERIMENT] : []),
  { name: "persisted, restore", store: "disk", op: "restore", serverRestart: false },
  { name: CLI_ARM, runner: "cli", store: "disk", op: "sync", serverRestart: false },
  { name: NODE_ARM, runner: "node", store: "disk", op: "sync", serverRestart: false },
  ...(haveRsync
    ? [{ name: RSYNC_ARM, runner: "rsync", store: "disk", op: "sync", serverRestart: false } as const]
    : []),
  { name: "persisted, sync (rescan)", store: "disk", op: "sync", serverRestart: false },
  { name: "memory (lost store)", store: "memory", op: "sync", serverRestart: false },
  { name: "persisted, restore, server restarted", store: "disk", op: "restore", serverRestart: true },
  { name: "memory (lost store), server restarted", store: "memory", op: "sync", serverRestart: true },
];

interface Sample {
  readonly pid: number;
  readonly serverPids: readonly number[];
  readonly wallMs: number;
  /** CPU time of the host process, user + system (the CLI and node arms; NaN for the others). */
  readonly cpuMs: number;
  readonly inProcessMs: number;
  readonly loadedMs: number;
  readonly openStoreMs: number;
  /** Time spent waiting on requests (all operations). */
  readonly requestsMs: number;
  readonly mode: string;
  readonly roundTrips: number;
  readonly entriesSent: number;
  readonly entriesReceived: number;
  readonly objectBytesSent: number;
  readonly objectBytesReceived: number;
  readonly rowsRead: number;
  readonly rowsWritten: number;
}

interface Row {
  readonly files: number;
  readonly arm: string;
  readonly store: string;
  readonly op: string;
  readonly serverRestart: boolean;
  readonly inProcess: Summary;
  readonly wall: Summary;
  readonly cpu: Summary;
  readonly counts: Record<string, string>;
  readonly samples: readonly Sample[];
}

await runSession(session, async () => {
  const server = await session.startServer();
  const token = server.token();
  const rows: Row[] = [];
  const setups: Record<string, unknown>[] = [];
  const seenPids = new Set<number>();
  const seenHostIds = new Set<string>();

  for (const files of sizes) {
    const root = join(session.tmp, `tree-${files}`);
    const workspace = `restore-${files}`;
    const tree = generateTree(root, files, 7);
    const before = digestTree(root);
    session.log(
      `${files} files: ${fmt(tree.bytes / 2 ** 20)} MiB, ${tree.dirs} dirs, ${tree.symlinks} symlinks; pushing`,
    );
    const base: Omit<HostArgs, "store" | "op"> = { root, url: server.url, workspace, token };
    server.resetPeaks();
    const push = await runHost({ ...base, store: "disk", op: "push" });
    const stats = await new FerryHttp(server.url, workspace, token).stats();
    if (stats.files !== before.files || stats.dirs !== before.dirs || stats.symlinks !== before.symlinks) {
      throw new Error(`server holds ${JSON.stringify(stats)} after pushing ${JSON.stringify(tree)}`);
    }
    const pushHostId = push.result.hostId;
    seenPids.add(push.result.pid);
    seenHostIds.add(pushHostId);
    setups.push({
      files,
      tree,
      pushMs: push.wallMs,
      // The report without its path lists (every path of the tree): counts are what the results keep.
      pushReport: { ...push.result.report, sent: undefined, received: undefined },
      serverPeakMiB: server.peakRuntimeMiB(),
    });
    session.log(`pushed in ${fmt(push.wallMs)} ms; server peak ${fmt(server.peakRuntimeMiB())} MiB`);

    // rsync's no-op: onto a copy of the tree made once (the store stays out of it, as ferry keeps it local).
    const mirror = join(session.tmp, `mirror-${files}`);
    const rsyncArgs = ["-a", "--exclude=/.ferry", `${root}/`, `${mirror}/`];
    if (haveRsync) await timeCommand("rsync", rsyncArgs);
    else session.log(RSYNC_MISSING);
    const runYardstick = async (spec: ArmSpec): Promise<Sample> => {
      let wallMs: number;
      let cpuMs = Number.NaN;
      let report: { roundTrips: number; entriesSent: number; objectBytesSent: number; ms: number } | null = null;
      if (spec.runner === "cli") {
        const run = await runCliSync("sync", root, { url: server.url, workspace, token });
        if (run.report.roundTrips !== 1 || run.report.entriesSent !== 0 || run.report.objectBytesSent !== 0) {
          throw new Error(`${spec.name}: not a restore of the persisted store: ${JSON.stringify(run.report)}`);
        }
        wallMs = run.wallMs;
        cpuMs = run.cpuMs;
        report = run.report;
      } else if (spec.runner === "node") ({ wallMs, cpuMs } = await timeNodeBare());
      else wallMs = (await timeCommand("rsync", rsyncArgs)).wallMs;
      return {
        pid: -1,
        serverPids: [],
        wallMs,
        cpuMs,
        inProcessMs: report?.ms ?? Number.NaN,
        loadedMs: Number.NaN,
        openStoreMs: Number.NaN,
        requestsMs: Number.NaN,
        mode: "",
        roundTrips: report?.roundTrips ?? 0,
        entriesSent: report?.entriesSent ?? 0,
        entriesReceived: 0,
        objectBytesSent: report?.objectBytesSent ?? 0,
        objectBytesReceived: 0,
        rowsRead: 0,
        rowsWritten: 0,
      };
    };
    const runArm = async (spec: ArmSpec): Promise<Sample> => {
      if (spec.runner !== undefined) return runYardstick(spec);
      if (spec.serverRestart) await server.restart();
      const serverPids = server.runtimePids();
      const run = await runHost({
        ...base,
        store: spec.store,
        op: spec.op,
        ...(spec.fetch ? { fetch: spec.fetch } : {}),
      });
      verifyRestart(spec, run, pushHostId, seenPids, seenHostIds, server);
      const r = run.result.report;
      return {
        pid: run.result.pid,
        serverPids,
        wallMs: run.wallMs,
        cpuMs: run.result.cpuMs,
        inProcessMs: run.result.ms.inProcess,
        loadedMs: run.result.ms.loaded,
        openStoreMs: run.result.ms.openStore,
        requestsMs: Object.values(run.result.calls).reduce((sum, c) => sum + c.ms, 0),
        mode: r.mode,
        roundTrips: r.roundTrips,
        entriesSent: r.entriesSent,
        entriesReceived: r.entriesReceived,
        objectBytesSent: r.objectBytesSent,
        objectBytesReceived: r.objectBytesReceived,
        rowsRead: run.result.rows.rowsRead,
        rowsWritten: run.result.rows.rowsWritten,
      };
    };
    for (const restart of withServerRestart ? [false, true] : [false]) {
      const specs = ARMS.filter((a) => a.serverRestart === restart);
      const arms: Arm<Sample>[] = specs.map((spec) => ({ name: spec.name, run: () => runArm(spec) }));
      const results = await runAlternating(arms, {
        samples: session.samples,
        warmup: session.warmup,
        onSample: (arm, round, s) => {
          const x = s as Sample;
          session.log(`${files} ${arm} #${round}: ${fmt(x.inProcessMs)} ms in process, ${fmt(x.wallMs)} ms whole`);
        },
      });
      for (const spec of specs) {
        const samples = results.get(spec.name) ?? [];
        rows.push({
          files,
          arm: spec.name,
          store: spec.store,
          op: spec.op,
          serverRestart: spec.serverRestart,
          inProcess: summarize(samples.map((s) => s.inProcessMs)),
          wall: summarize(samples.map((s) => s.wallMs)),
          cpu: summarize(samples.map((s) => s.cpuMs)),
          counts: countsOf(samples),
          samples,
        });
      }
    }
    // No arm may have changed the tree it restored over.
    assertSameTree(`tree-${files} after the restores`, before, digestTree(root));
  }

  const synced = rows.filter((r) => r.arm !== NODE_ARM && r.arm !== RSYNC_ARM);
  const headline = markdownTable(
    [
      "files",
      "`ferry sync`, whole process, median ms (min–max)",
      "`node -e 0` ms",
      "× node -e 0",
      "`rsync -a` no-op ms",
      "× rsync",
      "CPU ms: `ferry sync` / `node -e 0` (×)",
      "library restore (no rescan): in process / whole ms",
    ],
    sizes.map((files) => {
      const at = (arm: string) => rows.find((r) => r.files === files && r.arm === arm);
      const cli = at(CLI_ARM);
      const node = at(NODE_ARM);
      const rs = at(RSYNC_ARM);
      const lib = at("persisted, restore");
      const ratio = (other: Row | undefined) => (cli && other ? `${fmt(cli.wall.median / other.wall.median)}x` : "—");
      return [
        files.toLocaleString("en-US"),
        cli ? `${fmt(cli.wall.median)} (${fmt(cli.wall.min)}–${fmt(cli.wall.max)})` : "—",
        node ? fmt(node.wall.median) : "—",
        ratio(node),
        rs ? fmt(rs.wall.median) : "—",
        ratio(rs),
        cli && node
          ? `${fmt(cli.cpu.median)} / ${fmt(node.cpu.median)} (${fmt(cli.cpu.median / node.cpu.median)}x)`
          : "—",
        lib ? `${fmt(lib.inProcess.median)} / ${fmt(lib.wall.median)}` : "—",
      ];
    }),
  );
  const table = markdownTable(
    [
      "files",
      "host store",
      "server",
      "round trips",
      "entries sent",
      "entries received",
      "object bytes sent",
      "in-process median ms (min–max)",
      "whole process median ms (min–max)",
    ],
    synced.map((r) => [
      r.files.toLocaleString("en-US"),
      r.arm.replace(", server restarted", ""),
      r.serverRestart ? "restarted" : "running",
      r.counts.roundTrips ?? "",
      r.counts.entriesSent ?? "",
      r.counts.entriesReceived ?? "",
      r.counts.objectBytesSent ?? "",
      `${fmt(r.inProcess.median)} (${fmt(r.inProcess.min)}–${fmt(r.inProcess.max)})`,
      `${fmt(r.wall.median)} (${fmt(r.wall.min)}–${fmt(r.wall.max)})`,
    ]),
  );
  const med = (r: Row, k: "loadedMs" | "openStoreMs" | "requestsMs" | "inProcessMs") =>
    summarize(r.samples.map((s) => s[k])).median;
  const breakdown = markdownTable(
    [
      "files",
      "host store",
      "server",
      "process start to code loaded",
      "open store",
      "waiting on requests",
      "rest of in-process (scan, apply, store)",
    ],
    rows
      .filter((r) => ARMS.find((a) => a.name === r.arm)?.runner === undefined)
      .map((r) => [
        r.files.toLocaleString("en-US"),
        r.arm.replace(", server restarted", ""),
        r.serverRestart ? "restarted" : "running",
        fmt(med(r, "loadedMs")),
        fmt(med(r, "openStoreMs")),
        fmt(med(r, "requestsMs")),
        fmt(Math.max(0, med(r, "inProcessMs") - med(r, "openStoreMs") - med(r, "requestsMs"))),
      ]),
  );
  const setupTable = markdownTable(
    ["files", "MiB", "dirs", "symlinks", "first push s", "server peak RSS MiB (workerd)"],
    setups.map((s) => {
      const tree = s.tree as { files: number; bytes: number; dirs: number; symlinks: number };
      return [
        tree.files.toLocaleString("en-US"),
        fmt(tree.bytes / 2 ** 20, 1),
        tree.dirs.toLocaleString("en-US"),
        tree.symlinks,
        fmt((s.pushMs as number) / 1000),
        fmt(s.serverPeakMiB as number, 0),
      ];
    }),
  );
  const bars = barVerdicts(rows);
  const markdown = `What users run: \`ferry sync\` on the persisted store, whole process (spawn to exit, rescan included), beside \`node -e 0\` and an \`rsync -a\` of the unchanged tree onto its copy, interleaved in one run:\n\n${headline}\n\nEvery arm:\n\n${table}\n\n${bars.join("\n")}\n\nWhere the time goes (medians, ms):\n\n${breakdown}\n\nThe trees, and the first push of each (one sample; the server's peak memory while it ran):\n\n${setupTable}\n`;
  session.publish(
    {
      sizes,
      setups,
      rows,
      bars,
    },
    markdown,
  );
  writeCharts(rows);
  session.log(`wrote the charts ${session.resultName}.svg, ${session.resultName}-process.svg`);
});

function verifyRestart(
  spec: ArmSpec,
  run: HostRun,
  pushHostId: string,
  seenPids: Set<number>,
  seenHostIds: Set<string>,
  server: BenchServer,
): void {
  const r = run.result;
  if (seenPids.has(r.pid)) throw new Error(`${spec.name}: host pid ${r.pid} was seen before: not a new process`);
  seenPids.add(r.pid);
  if (spec.store === "disk" && (!r.storeExisted || r.hostId !== pushHostId)) {
    throw new Error(`${spec.name}: the store was not reopened (existed ${r.storeExisted}, host id ${r.hostId})`);
  }
  if (spec.store === "memory") {
    if (seenHostIds.has(r.hostId)) throw new Error(`${spec.name}: host id ${r.hostId} reused: the store was not lost`);
    seenHostIds.add(r.hostId);
  }
  if (spec.serverRestart && server.starts < 2) throw new Error(`${spec.name}: the server was never restarted`);
}

/** A count's value across samples: one number when they all agree (they should), else `min–max`. */
function countsOf(samples: readonly Sample[]): Record<string, string> {
  const keys = ["roundTrips", "entriesSent", "entriesReceived", "objectBytesSent", "rowsWritten", "mode"] as const;
  const out: Record<string, string> = {};
  for (const k of keys) {
    const values = [...new Set(samples.map((s) => s[k]))];
    if (typeof values[0] === "number") {
      const nums = values as number[];
      const lo = Math.min(...nums);
      const hi = Math.max(...nums);
      out[k] = lo === hi ? lo.toLocaleString("en-US") : `${lo.toLocaleString("en-US")}–${hi.toLocaleString("en-US")}`;
    } else out[k] = values.join("/");
  }
  return out;
}

function barVerdicts(rows: readonly Row[]): string[] {
  const out: string[] = [];
  const persisted = rows.filter((r) => r.arm === "persisted, restore");
  const exact = persisted.every((r) =>
    r.samples.every((s) => s.roundTrips === 1 && s.entriesSent === 0 && s.objectBytesSent === 0),
  );
  out.push(
    `Bar 1, counts: a persisted store restores in one round trip, no entries, no object bytes — ${exact ? "met in every sample" : "MISSED (see the table)"}.`,
  );
  const at = (n: number) => persisted.find((r) => r.files === n)?.inProcess.median;
  const t3k = at(3000);
  if (t3k !== undefined) {
    out.push(
      `Bar 1, time: median under 10 ms at 3,000 files — ${fmt(t3k)} ms in process: ${t3k < 10 ? "met" : "MISSED"}.`,
    );
  }
  const small = at(Math.min(...persisted.map((r) => r.files)));
  const large = at(Math.max(...persisted.map((r) => r.files)));
  if (small !== undefined && large !== undefined && persisted.length > 1) {
    const ratio = large / small;
    out.push(
      `Bar 1, flatness: the largest tree within 1.2x of the smallest — ${fmt(ratio)}x (${fmt(large)} / ${fmt(small)} ms): ${ratio <= 1.2 ? "met" : "MISSED"}.`,
    );
  }
  const wallAt = (arm: string, files: number) => rows.find((r) => r.arm === arm && r.files === files)?.wall.median;
  const cli3k = wallAt(CLI_ARM, 3000);
  const node3k = wallAt(NODE_ARM, 3000);
  if (cli3k !== undefined && node3k !== undefined) {
    const ratio = cli3k / node3k;
    out.push(
      `Bar 1, what users run: \`ferry sync\` on a persisted store of 3,000 files at most 2x \`node -e 0\`, whole process — ${fmt(ratio)}x (${fmt(cli3k)} / ${fmt(node3k)} ms): ${ratio <= 2 ? "met" : "MISSED"}.`,
    );
  }
  const cli30k = wallAt(CLI_ARM, 30000);
  const rsync30k = wallAt(RSYNC_ARM, 30000);
  if (cli30k !== undefined && rsync30k !== undefined) {
    const ratio = cli30k / rsync30k;
    out.push(
      `Bar 1, no-op sync: \`ferry sync\` of an unchanged 30,000-file tree no slower than \`rsync -a\` of it — ${fmt(ratio)}x (${fmt(cli30k)} / ${fmt(rsync30k)} ms): ${ratio <= 1 ? "met" : "MISSED"}.`,
    );
  }
  const memory = rows.filter((r) => r.store === "memory");
  const nothingSent = memory.every((r) => r.samples.every((s) => s.objectBytesSent === 0 && s.entriesSent === 0));
  out.push(
    `Bar 2: a lost store over an unchanged tree sends no object bytes and no entries — ${nothingSent ? "met in every sample" : "MISSED (see the table)"}.`,
  );
  return out;
}

function writeCharts(rows: readonly Row[]): void {
  const series = (pick: (r: Row) => Summary, arms: readonly string[]) =>
    arms.map((arm) => ({
      name: arm,
      points: rows
        .filter((r) => r.arm === arm)
        .map((r) => ({ x: r.files, y: pick(r).median, min: pick(r).min, max: pick(r).max })),
    }));
  const present = ARMS.map((a) => a.name).filter((n) => rows.some((r) => r.arm === n));
  const published = {
    name: "published figure: an in-memory store that resends everything",
    reference: true,
    points: [
      { x: 500, y: 480 },
      { x: 3000, y: 3749 },
    ],
  };
  writeFileSync(
    join(RESULTS_DIR, `${session.resultName}.svg`),
    lineChartSvg({
      title: "Restore after a host restart: in-process time (store open to in sync)",
      xLabel: "files in the tree (log)",
      yLabel: "ms, median with min–max (log)",
      series: [
        ...series(
          (r) => r.inProcess,
          present.filter((n) => n !== NODE_ARM && n !== RSYNC_ARM),
        ),
        published,
      ],
      marks: [
        { y: 10, label: "bar: 10 ms at 3,000 files" },
        { y: 25, label: "published persisted restore ~25 ms" },
      ],
    }),
  );
  writeFileSync(
    join(RESULTS_DIR, `${session.resultName}-process.svg`),
    lineChartSvg({
      title: "Restore after a host restart: whole process (spawn to exit)",
      xLabel: "files in the tree (log)",
      yLabel: "ms, median with min–max (log)",
      series: series((r) => r.wall, present),
    }),
  );
}
