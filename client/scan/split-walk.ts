/**
 * A large scan's walk on two threads. The walk is mostly system calls
 * (a readdir per directory, an lstat per entry): at 30,000 files it alone
 * cost about what `rsync -a` takes for its whole no-op, which rsync spreads
 * over two processes (BENCHMARKS.md section 14). So from `minPaths`
 * recorded paths the scanner cuts the walk in two (walk-cut.ts): a worker
 * thread walks the paths after the cut (walk-part.ts) while the main thread
 * walks those before it, then the main thread reads what the worker found
 * moved. A worker costs ~90 ms of CPU and ~95 ms before it runs, so a small
 * tree keeps one thread, and the main thread, which starts at once, takes
 * the larger share.
 */
import { createRequire } from "node:module";
import type * as WorkerThreads from "node:worker_threads";
import type { WalkedPart, WalkJob } from "./walk-part.ts";

/** node:worker_threads, loaded by the first split walk: a scan of a small tree, most commands, never use it. */
function workerThreads(): typeof WorkerThreads {
  return createRequire(import.meta.url)("node:worker_threads") as typeof WorkerThreads;
}

/** Where the worker's code is, and from how many recorded paths a scan uses it (client/cli/walk-split.ts). */
export interface WalkSplit {
  /** A CommonJS file exporting walk-part.ts's walkPart (the built dist/cli/chunks/walk-worker.cjs). */
  readonly script: string;
  readonly minPaths: number;
  /** The main thread's share of the recorded paths, 0 to 1 (default mainShare): tests cut at every place. */
  readonly share?: number;
}

/** What became of a split walk, for tests and benchmarks (ScanOptions.onSplit): the cut, and the worker's error (its part then walked on the main thread). */
export interface SplitOutcome {
  readonly cut: string;
  readonly error: string | null;
}

/**
 * The main thread's share of a walk of `paths` recorded paths: half, and
 * half of what it walks while the worker starts (~95 ms, ~6,000 entries at
 * ~15 µs each here), so that both parts end together.
 */
export function mainShare(paths: number): number {
  return Math.min(0.9, 0.5 + 3200 / paths);
}

/**
 * A worker that walks once it starts (it loads `script` and runs `walkPart`),
 * waited for with a shared flag. It answers once: its part, its error, or,
 * when its thread ends before either (process.exit in it), that it ended; the
 * main thread, blocked in join, would otherwise wait JOIN_TIMEOUT_MS for it.
 */
const BOOT = `
const { workerData: w } = require("node:worker_threads");
let answered = false;
const answer = (out) => {
  if (answered) return;
  answered = true;
  w.port.postMessage(out);
  w.port.close();
  Atomics.store(w.done, 0, 1);
  Atomics.notify(w.done, 0);
};
process.on("exit", () => answer({ error: "the walk's worker ended before it answered" }));
let out;
try { out = { part: require(w.script).walkPart(w.job) }; } catch (e) { out = { error: String((e && e.stack) || e) }; }
answer(out);
`;

/** Longest wait for the worker's part before the main thread walks it itself. */
const JOIN_TIMEOUT_MS = 600_000;

/** One part of a walk out on a worker thread. */
export class WalkHelper {
  private readonly done = new Int32Array(new SharedArrayBuffer(4));
  private readonly threads = workerThreads();
  private readonly port: WorkerThreads.MessagePort;
  private readonly worker: WorkerThreads.Worker;

  constructor(script: string, job: WalkJob) {
    const { port1, port2 } = new this.threads.MessageChannel();
    this.port = port1;
    this.worker = new this.threads.Worker(BOOT, {
      eval: true,
      workerData: { script, job, done: this.done, port: port2 },
      transferList: [port2],
    });
    // The scan waits for it (join); a process that ends meanwhile (an error) is not kept alive by it.
    this.worker.unref();
  }

  /**
   * Blocks until the worker handed its part back (a scan is synchronous
   * between its pauses; the main thread has walked its own part by now):
   * the part, or the worker's error.
   */
  join(): { readonly part: WalkedPart } | { readonly error: string } {
    const waited = Atomics.wait(this.done, 0, 0, JOIN_TIMEOUT_MS);
    const message = this.threads.receiveMessageOnPort(this.port)?.message as
      | { readonly part: WalkedPart }
      | { readonly error: string }
      | undefined;
    this.port.close();
    if (message === undefined) {
      void this.worker.terminate();
      return { error: waited === "timed-out" ? "the walk's worker did not answer" : "the walk's worker sent nothing" };
    }
    return message;
  }
}
