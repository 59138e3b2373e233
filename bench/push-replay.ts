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
 *   npm run bench:push -- --replay hono@4.13.0 [--steps 20]
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { runCliSync, timeCommand } from "./lib/cli-process.ts";
import { assertSameTree, digestTree } from "./lib/digest.ts";
import { FerryHttp } from "./lib/http.ts";
import { buildReplaySteps, versionsFrom } from "./lib/replay-steps.ts";
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
  readonly rsyncMs: number;
  readonly ferryFirst: boolean;
  readonly roundTrips: number;
  readonly entriesSent: number;
  readonly objectBytesSent: number;
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
  const work = join(session.tmp, "work");
  const mirror = join(session.tmp, "mirror");
  mkdirSync(work);
  mkdirSync(mirror);
  const checkout = (dir: string, into: string) =>
    timeCommand("rsync", ["-a", "--delete", "--exclude=/.ferry", `${dir}/`, `${into}/`]);

  // Step 0 is the starting point on both sides, untimed.
  const first = steps[0];
  if (!first) throw new Error("no steps");
  await checkout(first.dir, work);
  await runCliSync("sync", work, endpoint);
  await checkout(first.dir, mirror);

  const rows: StepRow[] = [];
  for (const [i, step] of steps.entries()) {
    if (i === 0) continue;
    const ferryFirst = i % 2 === 1;
    const ferry = async () => {
      await checkout(step.dir, work);
      return runCliSync("sync", work, endpoint);
    };
    const mirrorStep = () => timeCommand("rsync", ["-a", "--delete", `${step.dir}/`, `${mirror}/`]);
    let f: Awaited<ReturnType<typeof ferry>>;
    let r: Awaited<ReturnType<typeof mirrorStep>>;
    if (ferryFirst) {
      f = await ferry();
      r = await mirrorStep();
    } else {
      r = await mirrorStep();
      f = await ferry();
    }
    if (step.written + step.deleted > 0 && f.report.entriesSent === 0) {
      throw new Error(
        `step ${i} (${step.version}) changed ${step.written + step.deleted} files but ferry sent nothing`,
      );
    }
    rows.push({
      step: i,
      version: step.version,
      written: step.written,
      deleted: step.deleted,
      ferryMs: f.wallMs,
      rsyncMs: r.wallMs,
      ferryFirst,
      roundTrips: f.report.roundTrips,
      entriesSent: f.report.entriesSent,
      objectBytesSent: f.report.objectBytesSent,
    });
    session.log(
      `step ${i} ${step.version}: ${step.written} written, ${step.deleted} deleted; ferry sync ${fmt(f.wallMs)} ms, rsync ${fmt(r.wallMs)} ms`,
    );
  }
  const last = steps[steps.length - 1];
  if (!last) throw new Error("no steps");
  await verifyServerHolds(new FerryHttp(server.url, endpoint.workspace, endpoint.token), expectTree(last.dir));
  assertSameTree("the mirror after the replay", digestTree(last.dir), digestTree(mirror));

  const ferry = summarize(rows.map((r) => r.ferryMs));
  const rs = summarize(rows.map((r) => r.rsyncMs));
  const ratios = summarize(rows.map((r) => r.ferryMs / r.rsyncMs));
  const table = markdownTable(
    [
      "step",
      "version",
      "files written / deleted",
      "`ferry sync` ms",
      "`rsync -a --delete` ms",
      "× rsync",
      "round trips",
      "entries sent",
      "object KiB sent",
    ],
    rows.map((r) => [
      r.step,
      r.version,
      `${r.written} / ${r.deleted}`,
      fmt(r.ferryMs),
      fmt(r.rsyncMs),
      `${fmt(r.ferryMs / r.rsyncMs)}x`,
      r.roundTrips,
      r.entriesSent,
      fmt(r.objectBytesSent / 1024, 0),
    ]),
  );
  const total = (k: "ferryMs" | "rsyncMs") => rows.reduce((sum, r) => sum + r[k], 0);
  const tree = digestTree(last.dir);
  const verdict = ratios.median <= 1.5 ? "met" : "MISSED";
  const summary = `Replay of ${name} ${versions[0]} … ${versions[versions.length - 1]} (${rows.length} steps after the first; the last tree ${tree.files} files, ${fmt(tree.bytes / MiB, 1)} MiB). Per step, median (min–max): \`ferry sync\` ${fmt(ferry.median)} ms (${fmt(ferry.min)}–${fmt(ferry.max)}), \`rsync -a --delete\` ${fmt(rs.median)} ms (${fmt(rs.min)}–${fmt(rs.max)}); the per-step ratio ${fmt(ratios.median)}x (${fmt(ratios.min)}–${fmt(ratios.max)}); in total ${fmt(total("ferryMs") / 1000)} s against ${fmt(total("rsyncMs") / 1000)} s. Request concurrency and idle time: not known for the CLI (one process per step; see the push and pull rows for the library's).\n\nBar (issue 13): incremental replay at most 1.5x rsync per step — ${fmt(ratios.median)}x median: ${verdict}.`;
  const markdown = `${summary}\n\n${table}\n`;
  session.publish(
    { package: name, versions, rsync, steps: rows, summary: { ferry, rsync: rs, ratios } },
    markdown,
    session.resultName.replace(/^push/, "push-replay"),
  );
}
