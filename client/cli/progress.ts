/**
 * Progress lines on a terminal (stderr), one per running task with a known
 * total, redrawn ten times a second, for Output (output.ts), which decides
 * when they show. Each line ends on its last figures (its total, when the
 * work finished) before it goes.
 * Every other line is printed through `log`, which erases the progress
 * lines, writes the text where they were and draws them again below it: a
 * line is never drawn over, and nothing is redrawn between a line's parts.
 * (cli-progress, used before, redraws on its own timer relative to where it
 * thinks the cursor is, so text written around it was overwritten.)
 */
import { nowMs } from "../common/clock.ts";
import type { ProgressSink, ProgressTask } from "../engine/report.ts";
import { formatBytes } from "./format.ts";

const BYTE_TASKS: ReadonlySet<ProgressTask> = new Set(["hash", "upload", "download"]);
const FRAME_MS = 100;
/** The order tasks are listed in, whatever order they began in. */
const ORDER: readonly ProgressTask[] = ["scan", "hash", "upload", "pull", "download", "push"];

interface Task {
  /** 0: not known (work advanced with no begin), and then the task shows no line. */
  total: number;
  /** The total is what is known so far: more is to come (a pull's next pages). */
  more: boolean;
  done: number;
  started: number;
}

export interface TerminalProgress extends ProgressSink {
  /** Prints `text` (whole lines) on `stream` without disturbing the progress lines. */
  log(stream: NodeJS.WriteStream, text: string): void;
  /** Removes every task (a sync ended, perhaps by an error that left its tasks unfinished). */
  reset(): void;
  /** Erases the progress lines for good. */
  stop(): void;
}

export function terminalProgress(term: NodeJS.WriteStream = process.stderr): TerminalProgress {
  const tasks = new Map<ProgressTask, Task>();
  let drawn = 0;
  let stopped = false;
  const erase = () => {
    if (drawn === 0) return;
    term.write(`\r${drawn > 1 ? `\x1b[${drawn - 1}A` : ""}\x1b[J`);
    drawn = 0;
  };
  let drawnAt = 0;
  const draw = () => {
    drawnAt = nowMs();
    if (stopped || tasks.size === 0) return;
    // A terminal that reports no size (0 columns) is taken as 80 wide.
    const width = Math.max(20, (term.columns || 80) - 1);
    // A line only against a known total: a count with nothing to measure it by was the
    // `scan 0` that never moved (a first scan knows no total; its large files still show).
    const shown = ORDER.filter((t) => (tasks.get(t)?.total ?? 0) > 0);
    const lines = shown.map((t) => describe(t, tasks.get(t) as Task).slice(0, width));
    if (lines.length === 0) return;
    term.write(lines.join("\n"));
    drawn = lines.length;
  };
  const timer = setInterval(() => {
    erase();
    draw();
  }, FRAME_MS);
  timer.unref();
  const redraw = () => {
    erase();
    draw();
  };
  return {
    begin(task, total, more = false) {
      if (stopped) return;
      const t = tasks.get(task);
      // Work done before a total was known is not part of it (bytes sent while the scan hashed).
      if (t && t.total === 0) Object.assign(t, { done: 0, started: nowMs() });
      if (t) Object.assign(t, { total, more });
      else tasks.set(task, { total, more, done: 0, started: nowMs() });
    },
    advance(task, delta) {
      const t = tasks.get(task);
      if (t) t.done += delta;
      else if (!stopped) tasks.set(task, { total: 0, more: false, done: delta, started: nowMs() });
      // Hashing one large file holds the event loop, so the timer cannot draw: draw from here.
      if (nowMs() - drawnAt >= FRAME_MS) redraw();
    },
    end(task) {
      if (!tasks.has(task)) return;
      // Its last figures are drawn once (the end of a task is often quicker than a frame), then it goes.
      redraw();
      tasks.delete(task);
    },
    log(stream, text) {
      erase();
      stream.write(text);
      draw();
    },
    reset() {
      tasks.clear();
      erase();
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      tasks.clear();
      erase();
    },
  };
}

/** `upload   12 MiB / 40 MiB 30%  4.1 MiB/s  ETA 7s`, `scan     1200 / 5846 20%  3100/s`, `pull     800 / 5000+  900/s` */
function describe(task: ProgressTask, t: Task): string {
  const bytes = BYTE_TASKS.has(task);
  const show = (n: number) => (bytes ? formatBytes(n) : String(n));
  const elapsed = Math.max(0.001, (nowMs() - t.started) / 1000);
  const rate = t.done / elapsed;
  // A scan's total is the paths the store knew: a tree that grew passes it, and the total grows with it.
  const total = Math.max(t.total, t.done);
  const of = t.more ? ` / ${show(total)}+` : ` / ${show(total)} ${Math.floor((t.done / total) * 100)}%`;
  const eta = bytes && !t.more && total > t.done && t.done > 0 ? `  ETA ${formatEta((total - t.done) / rate)}` : "";
  return `${task.padEnd(8)} ${show(t.done)}${of}  ${show(Math.round(rate))}/s${eta}`;
}

function formatEta(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, "0")}m`;
}
