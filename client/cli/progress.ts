/**
 * Progress bars on stderr (cli-progress), one per task while it runs. Only
 * on a terminal and never with --json: scripts and logs get the summary line.
 */
import type cliProgressModule from "cli-progress";
import type { ProgressSink, ProgressTask } from "../engine/report.ts";
import { formatBytes } from "./format.ts";

const BYTE_TASKS: ReadonlySet<ProgressTask> = new Set(["upload", "download"]);

/** Loaded only when bars are shown (a terminal), to keep startup short for scripts. */
export async function terminalProgress(): Promise<ProgressSink & { stop(): void }> {
  const { default: cliProgress } = (await import("cli-progress")) as { default: typeof cliProgressModule };
  const multi = new cliProgress.MultiBar(
    {
      stream: process.stderr,
      clearOnComplete: true,
      hideCursor: true,
      fps: 10,
      format: (_options, params, payload: { task: ProgressTask }) => {
        const bytes = BYTE_TASKS.has(payload.task);
        const show = (n: number) => (bytes ? formatBytes(n) : String(n));
        const elapsed = Math.max(0.001, (Date.now() - params.startTime) / 1000);
        const rate = `${show(Math.round(params.value / elapsed))}/s`;
        const of = params.total > 0 ? ` / ${show(params.total)} ${Math.floor(params.progress * 100)}%` : "";
        return `${payload.task.padEnd(8)} ${show(params.value)}${of}  ${rate}`;
      },
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<ProgressTask, cliProgressModule.SingleBar>();
  const bar = (task: ProgressTask, total = 0) => {
    let b = bars.get(task);
    if (!b) {
      b = multi.create(total, 0, { task });
      bars.set(task, b);
    }
    return b;
  };
  return {
    begin(task, total) {
      bar(task, total).setTotal(total);
    },
    advance(task, delta) {
      bar(task).increment(delta);
    },
    end(task) {
      const b = bars.get(task);
      if (b) {
        multi.remove(b);
        bars.delete(task);
      }
    },
    stop() {
      multi.stop();
    },
  };
}
