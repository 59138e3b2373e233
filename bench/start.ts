/**
 * bench:start — what every `ferry` command pays before it does anything:
 * `ferry --help` and `ferry token` (commander and the command definitions,
 * nothing else: the store, engine and transports load only for the commands
 * that use them) against a bare `node -e 0`, whole process, arms alternated.
 * Bar (issue 13): `ferry --help` within 1.3x of `node -e 0`. bench:restore
 * measures `ferry sync` itself.
 *
 *   npm run bench:start [-- --samples 30]
 */
import { join } from "node:path";
import { buildCli, type CommandRun, timeCommand, timeNodeBare } from "./lib/cli-process.ts";
import { markdownTable, REPO_DIR } from "./lib/results.ts";
import { openSession, runSession } from "./lib/session.ts";
import { type Arm, fmt, runAlternating, summarize } from "./lib/stats.ts";

const session = openSession("start");
const BAR = 1.3;

await runSession(session, async () => {
  buildCli();
  const ferry =
    (...args: string[]) =>
    () =>
      timeCommand(process.execPath, [join(REPO_DIR, "bin", "ferry.cjs"), ...args]);
  const arms: Arm<CommandRun>[] = [
    { name: "node -e 0", run: timeNodeBare },
    { name: "ferry --help", run: ferry("--help") },
    { name: "ferry token demo", run: ferry("token", "demo") },
  ];
  const samples = session.quick ? Math.min(session.samples, 10) : Math.max(session.samples, 20);
  const results = await runAlternating(arms, { samples, warmup: session.warmup });
  const rows = arms.map((arm) => {
    const runs = results.get(arm.name) ?? [];
    return { arm: arm.name, wall: summarize(runs.map((r) => r.wallMs)), cpu: summarize(runs.map((r) => r.cpuMs)) };
  });
  const node = rows[0] as (typeof rows)[number];
  const table = markdownTable(
    [
      "command",
      "whole process median ms (min–max)",
      "× node -e 0",
      "CPU (user + system) median ms (min–max)",
      "CPU × node -e 0",
    ],
    rows.map((r) => [
      `\`${r.arm}\``,
      `${fmt(r.wall.median)} (${fmt(r.wall.min)}–${fmt(r.wall.max)})`,
      `${fmt(r.wall.median / node.wall.median)}x`,
      `${fmt(r.cpu.median)} (${fmt(r.cpu.min)}–${fmt(r.cpu.max)})`,
      `${fmt(r.cpu.median / node.cpu.median)}x`,
    ]),
  );
  const help = rows.find((r) => r.arm === "ferry --help");
  const ratio = (help?.wall.median ?? Number.NaN) / node.wall.median;
  const cpuRatio = (help?.cpu.median ?? Number.NaN) / node.cpu.median;
  const bar = `Bar (issue 13): \`ferry --help\` within ${BAR}x of \`node -e 0\` — ${fmt(ratio)}x (CPU ${fmt(cpuRatio)}x): ${ratio <= BAR ? "met" : "MISSED"}.`;
  session.publish({ samples, rows, bar }, `${samples} samples per command, alternated.\n\n${table}\n\n${bar}\n`);
});
