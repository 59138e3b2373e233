/**
 * Everything a CLI run prints goes through one Output, so lines and bars
 * never overwrite each other. Bars show only when stderr is a terminal and
 * neither --json nor --no-progress nor -q was given; while they show, every
 * line (summary, warning, error) is printed where they were and they are
 * drawn again below it (progress.ts), never over it. `-q` hides progress,
 * summaries and warnings, never errors nor the lines a person must act on
 * (`notice`); `-v` adds every path sent and received. A command a
 * watch serves for another process (resident-server.ts) prints into that
 * process's streams instead of this one's (`OutputStreams`).
 */
import { type TerminalProgress, terminalProgress } from "./progress.ts";

export interface OutputFlags {
  readonly json?: boolean;
  readonly progress?: boolean;
  readonly quiet?: boolean;
  readonly verbose?: boolean;
}

/** Where a run's lines go: one `write` per whole line (or lines). */
export interface LineSink {
  write(text: string): unknown;
}

export interface OutputStreams {
  readonly stdout: LineSink;
  readonly stderr: LineSink;
}

export class Output {
  private constructor(
    readonly flags: OutputFlags,
    readonly bars: TerminalProgress | null,
    private readonly streams: OutputStreams,
  ) {}

  /** This process's stdout and stderr, with progress bars when stderr is a terminal. */
  static open(flags: OutputFlags): Output {
    const wantBars = !flags.json && flags.progress !== false && !flags.quiet && process.stderr.isTTY === true;
    return new Output(flags, wantBars ? terminalProgress() : null, process);
  }

  /** Other streams, never with bars. */
  static into(flags: OutputFlags, streams: OutputStreams): Output {
    return new Output(flags, null, streams);
  }

  /** What a run did (the summary, the watch lines): stdout, not with -q, nor with --json (stdout is its objects). */
  info(line: string): void {
    if (!this.flags.quiet && !this.flags.json) this.write("stdout", line);
  }

  /** Every path moved, with -v only. */
  detail(line: string): void {
    if (this.flags.verbose) this.info(line);
  }

  /** Warnings that need nobody to act (a watch not serving other commands): stderr, not with -q. */
  warn(line: string): void {
    if (!this.flags.quiet) this.write("stderr", line);
  }

  /** What a person must act on (a conflict copy kept, a path skipped or refused): stderr, even with -q. */
  notice(line: string): void {
    this.write("stderr", line);
  }

  /** Errors: stderr, always. */
  error(line: string): void {
    this.write("stderr", line);
  }

  /** The one JSON object of --json. */
  json(value: unknown): void {
    this.streams.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** Clears the bars for good (before the last lines, and on exit). */
  stop(): void {
    this.bars?.stop();
  }

  private write(which: "stdout" | "stderr", line: string): void {
    if (this.bars) this.bars.log(process[which], `${line}\n`);
    else this.streams[which].write(`${line}\n`);
  }
}
