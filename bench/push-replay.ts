/**
 * bench:push --replay <package>@<version>: an incremental sequence of real
 * changes (the package's consecutive published versions, checked out one
 * after another: bench/lib/replay-steps.ts) replayed step by step with
 * `ferry sync` (the CLI, whole process) against `rsync -a --delete` of the
 * same step onto a mirror, alternating which goes first. Before each timed
 * `ferry sync` the step is put into its working tree with an untimed `rsync
 * -a --delete`, as a checkout would change it. At the end the server must
 * hold the last step exactly, and the mirror must equal it.
 *
 * A third arm, in the same rotation, runs each step's `ferry sync` with a
 * `ferry sync --watch` of its own copy (another workspace) running, which
 * the command hands itself to (the served arm: bench/lib/resident-watch.ts
 * says how the watch's own work is kept inside the timed window and
 * counted). Its server must hold the last step exactly too.
 *
 *   npm run bench:push -- --replay hono@4.13.0 [--steps 20]
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { runCliSync, timeCommand } from "./lib/cli-process.ts";
import { assertSameTree, digestTree } from "./lib/digest.ts";
import { FerryHttp } from "./lib/http.ts";
import { buildReplaySteps, versionsFrom } from "./lib/replay-steps.ts";
import { ResidentWatch } from "./lib/resident-watch.ts";
import { markdownTable } from "./lib/results.ts";
import { RSYNC_MISSING, rsyncVersion } from "./lib/rsync.ts";
import type { Session } from "./lib/session.ts";
import { fmt, summarize } from "./lib/stats.ts";
import { expectTree, verifyServerHolds } from "./lib/verify-server.ts";

const MiB = 2 ** 20;

interface StepRow {
  readonly step: number;
  readonly version: string;
  readonly written: number;
  readonly deleted: number;
  readonly ferryMs: number;
  readonly servedMs: number;
  readonly rsyncMs: number;
  /** Which arm ran first, second and third. */
  readonly order: string;
  readonly roundTrips: number;
  readonly entriesSent: number;
  readonly objectBytesSent: number;
  /** The served arm's: its command's and the watch's own syncs' during the step. */
  readonly servedRoundTrips: number;
  readonly servedEntriesSent: number;
}

export async function runReplay(session: Session, spec: string): Promise<void> {
  const rsync = rsyncVersion();
  if (rsync === null) throw new Error(RSYNC_MISSING);
  const stepCount = Number(session.values.steps ?? (session.quick ? 5 : 20));
  const { name, versions } = versionsFrom(spec, stepCount);
  session.log(`replaying ${name} ${versions[0]} … ${versions[versions.length - 1]} (${versions.length} steps)`);
  const steps = buildReplaySteps(name, versions, join(session.tmp, "replay"));
  const server = await session.startServer();
  const endpoint = { url: server.url, workspace: "replay", token: server.token() };
  const served = { ...endpoint, workspace: "replay-served" };
  const work = join(session.tmp, "work");
  const servedWork = join(session.tmp, "served");
  const mirror = join(session.tmp, "mirror");
  mkdirSync(work);
  mkdirSync(servedWork);
  mkdirSync(mirror);
  const checkout = (dir: string, into: string) =>
    timeCommand("rsync", ["-a", "--delete", "--exclude=/.ferry", `${dir}/`, `${into}/`]);

  // Step 0 is the starting point on every side, untimed.
  const first = steps[0];
  if (!first) throw new Error("no steps");
  await checkout(first.dir, work);
  await runCliSync("sync", work, endpoint);
  await checkout(first.dir, servedWork);
  await runCliSync("sync", servedWork, served);
  const watch = await ResidentWatch.start(servedWork, served);
  await checkout(first.dir, mirror);

  const rows: StepRow[] = [];
  try {
    for (const [i, step] of steps.entries()) {
      if (i === 0) continue;
      const ferry = async () => {
        await checkout(step.dir, work);
        return runCliSync("sync", work, endpoint);
      };
      const servedStep = async () => {
        watch.pause();
        await checkout(step.dir, servedWork);
        watch.resume();
        return runCliSync("sync", servedWork, served);
      };
      const mirrorStep = () => timeCommand("rsync", ["-a", "--delete", `${step.dir}/`, `${mirror}/`]);
      // Each arm first, second and third in turn.
      const arms = ["ferry", "served", "rsync"] as const;
      const order = [0, 1, 2].map((k) => arms[(k + i) % 3] as (typeof arms)[number]);
      const runs: Partial<{
        ferry: Awaited<ReturnType<typeof ferry>>;
        served: Awaited<ReturnType<typeof ferry>>;
        rsync: Awaited<ReturnType<typeof mirrorStep>>;
      }> = {};
      for (const arm of order) {
        if (arm === "ferry") runs.ferry = await ferry();
        else if (arm === "served") runs.served = await servedStep();
        else runs.rsync = await mirrorStep();
      }
      const { ferry: f, served: v, rsync: r } = runs as Required<typeof runs>;
      if (step.written + step.deleted > 0 && f.report.entriesSent === 0) {
        throw new Error(
          `step ${i} (${step.version}) changed ${step.written + step.deleted} files but ferry sent nothing`,
        );
      }
      const own = watch.ownSyncs();
      rows.push({
        step: i,
        version: step.version,
        written: step.written,
        deleted: step.deleted,
        ferryMs: f.wallMs,
        servedMs: v.wallMs,
        rsyncMs: r.wallMs,
        order: order.join(", "),
        roundTrips: f.report.roundTrips,
        entriesSent: f.report.entriesSent,
        objectBytesSent: f.report.objectBytesSent,
        servedRoundTrips: v.report.roundTrips + own.reduce((n, s) => n + s.roundTrips, 0),
        servedEntriesSent: v.report.entriesSent + own.reduce((n, s) => n + s.entriesSent, 0),
      });
      session.log(
        `step ${i} ${step.version}: ${step.written} written, ${step.deleted} deleted; ferry sync ${fmt(f.wallMs)} ms, served ${fmt(v.wallMs)} ms, rsync ${fmt(r.wallMs)} ms`,
      );
    }
  } finally {
    await watch.stop();
  }
  const last = steps[steps.length - 1];
  if (!last) throw new Error("no steps");
  await verifyServerHolds(new FerryHttp(server.url, endpoint.workspace, endpoint.token), expectTree(last.dir));
  await verifyServerHolds(new FerryHttp(server.url, served.workspace, served.token), expectTree(last.dir));
  assertSameTree("the mirror after the replay", digestTree(last.dir), digestTree(mirror));

  const ferry = summarize(rows.map((r) => r.ferryMs));
  const servedSummary = summarize(rows.map((r) => r.servedMs));
  const rs = summarize(rows.map((r) => r.rsyncMs));
  const ratios = summarize(rows.map((r) => r.ferryMs / r.rsyncMs));
  const servedRatios = summarize(rows.map((r) => r.servedMs / r.rsyncMs));
  const table = markdownTable(
    [
      "step",
      "version",
      "files written / deleted",
      "`ferry sync` ms",
      "served by a watch ms",
      "`rsync -a --delete` ms",
      "× rsync",
      "served × rsync",
      "order",
      "round trips",
      "entries sent",
      "served: round trips / entries",
      "object KiB sent",
    ],
    rows.map((r) => [
      r.step,
      r.version,
      `${r.written} / ${r.deleted}`,
      fmt(r.ferryMs),
      fmt(r.servedMs),
      fmt(r.rsyncMs),
      `${fmt(r.ferryMs / r.rsyncMs)}x`,
      `${fmt(r.servedMs / r.rsyncMs)}x`,
      r.order,
      r.roundTrips,
      r.entriesSent,
      `${r.servedRoundTrips} / ${r.servedEntriesSent}`,
      fmt(r.objectBytesSent / 1024, 0),
    ]),
  );
  const total = (k: "ferryMs" | "servedMs" | "rsyncMs") => rows.reduce((sum, r) => sum + r[k], 0);
  const tree = digestTree(last.dir);
  const verdict = (ratio: number) => (ratio <= 1.5 ? "met" : "MISSED");
  const summary = `Replay of ${name} ${versions[0]} … ${versions[versions.length - 1]} (${rows.length} steps after the first; the last tree ${tree.files} files, ${fmt(tree.bytes / MiB, 1)} MiB). Per step, median (min–max): \`ferry sync\` in its own process ${fmt(ferry.median)} ms (${fmt(ferry.min)}–${fmt(ferry.max)}), served by a running \`ferry sync --watch\` ${fmt(servedSummary.median)} ms (${fmt(servedSummary.min)}–${fmt(servedSummary.max)}), \`rsync -a --delete\` ${fmt(rs.median)} ms (${fmt(rs.min)}–${fmt(rs.max)}); the per-step ratio ${fmt(ratios.median)}x (${fmt(ratios.min)}–${fmt(ratios.max)}) in its own process, ${fmt(servedRatios.median)}x (${fmt(servedRatios.min)}–${fmt(servedRatios.max)}) served; in total ${fmt(total("ferryMs") / 1000)} s, ${fmt(total("servedMs") / 1000)} s served, against ${fmt(total("rsyncMs") / 1000)} s. Request concurrency and idle time: not known for the CLI (one process per step; see the push and pull rows for the library's).\n\nBar (issue 13): incremental replay at most 1.5x rsync per step. Read against \`ferry sync\` in its own process (what runs without a watch): ${fmt(ratios.median)}x median, ${verdict(ratios.median)}. Served by a running watch: ${fmt(servedRatios.median)}x median, ${verdict(servedRatios.median)}.`;
  const markdown = `${summary}\n\n${table}\n`;
  session.publish(
    {
      package: name,
      versions,
      rsync,
      steps: rows,
      summary: { ferry, served: servedSummary, rsync: rs, ratios, servedRatios },
    },
    markdown,
    session.resultName.replace(/^push/, "push-replay"),
  );
}
