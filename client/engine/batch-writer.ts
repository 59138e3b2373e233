/**
 * New files of a pull written in batches on a worker thread (issue 13): the
 * main thread receives, verifies and decides; the worker makes each file as
 * the applier would (write-file.ts, replace-guard.ts placeIfEmpty): a new
 * temporary file with its bytes, mtime and mode, then a hard link at its
 * path only if nothing is there (a file that appeared meanwhile is never
 * overwritten), then the temporary name dropped. One message a batch each
 * way, not a trip through libuv's pool a file (the write slots, which cost
 * more than they saved: BENCHMARKS.md section 16).
 *
 * Only what the applier hands it goes there (apply.ts `queue`): a file whose
 * path the decision saw empty, whose bytes are all in memory. Anything the
 * worker could not do (the link met something, no permission, a full disk)
 * comes back as an errno code, with nothing left at the path or the
 * temporary name, and the applier applies that change again on the main
 * thread, where every refusal, conflict copy and unlock happens as before.
 *
 * Off unless FERRY_PULL_WRITER=1.
 */
import type { BigIntStats } from "node:fs";
import { Worker } from "node:worker_threads";

/** The worker's whole program: CommonJS in an eval'd worker, so it needs no file of its own in the bundles. */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const fs = require("node:fs");
// Per mode: whether open gives exactly those bits under this umask (write-file.ts OPENS_EXACT).
const opensExact = new Map();
parentPort.on("message", ({ id, files, bytes }) => {
  const view = new Uint8Array(bytes);
  const results = files.map((f) => {
    let fd = -1;
    let st = null;
    let linked = false;
    try {
      fd = fs.openSync(f.temp, "wx", f.createMode);
      let at = f.offset;
      let left = f.size;
      while (left > 0) {
        const n = fs.writeSync(fd, view, at, left);
        at += n;
        left -= n;
      }
      fs.futimesSync(fd, f.time, f.time);
      if (opensExact.get(f.mode) === false) fs.fchmodSync(fd, f.mode);
      fs.linkSync(f.temp, f.abs);
      linked = true;
      fs.unlinkSync(f.temp);
      // Taken once placed: the link and unlink moved its ctime (write-file.ts placedFileKey).
      st = fs.fstatSync(fd, { bigint: true });
      opensExact.set(f.mode, opensExact.get(f.mode) ?? Number(st.mode & 0o7777n) === f.mode);
      if (Number(st.mode & 0o7777n) !== f.mode) {
        fs.fchmodSync(fd, f.mode);
        st = fs.fstatSync(fd, { bigint: true });
      }
      fs.closeSync(fd);
      return { stat: { ...st } };
    } catch (e) {
      if (fd >= 0) try { fs.closeSync(fd); } catch {}
      if (!linked) try { fs.unlinkSync(f.temp); } catch {}
      // Placed, only its temporary name not dropped or its fstat failed: no fingerprint, and the
      // scanner removes the litter (stale-temp.ts).
      if (linked) return { stat: null };
      return { code: typeof e?.code === "string" ? e.code : "EIO" };
    }
  });
  parentPort.postMessage({ id, results });
});
`;

/** One file for the worker: where, what bits, and its bytes' place in the batch buffer. */
export interface WriterFile {
  readonly temp: string;
  readonly abs: string;
  /** The bits to create it with (write-file.ts CREATE_MODE_MASK) and the ones it must end with. */
  readonly createMode: number;
  readonly mode: number;
  /** utimes' seconds (stat-key.ts utimeSeconds). */
  readonly time: string;
  readonly offset: number;
  readonly size: number;
}

/**
 * What became of one file: placed, with the fstat of its descriptor, or the
 * errno code that stopped it. The fstat crossed threads as a copy of its
 * fields, without BigIntStats' methods: stat-key.ts's statKey reads fields only.
 */
export type WriterResult = { readonly stat: BigIntStats; readonly code?: undefined } | { readonly code: string };

export class BatchWriter {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true });
  private readonly waiting = new Map<number, (results: WriterResult[]) => void>();
  private nextId = 0;
  private failed: Error | null = null;

  constructor() {
    this.worker.on("message", ({ id, results }: { id: number; results: WriterResult[] }) => {
      const resolve = this.waiting.get(id);
      this.waiting.delete(id);
      if (this.waiting.size === 0) this.worker.unref();
      resolve?.(results);
    });
    this.worker.on("error", (e) => {
      this.failed = e;
      for (const resolve of this.waiting.values()) resolve([]);
      this.waiting.clear();
    });
    // An idle worker does not keep the process alive; one writing does (`write`).
    this.worker.unref();
  }

  /** Writes the files of one batch; answers one result a file, in order. `bytes` moves to the worker (detached here). */
  write(files: readonly WriterFile[], bytes: ArrayBuffer): Promise<WriterResult[]> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (results) => (results.length === files.length ? resolve(results) : reject(this.failed)));
      this.worker.ref();
      this.worker.postMessage({ id, files, bytes }, [bytes]);
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

/** Whether this process's pulls write new files on a worker thread (FERRY_PULL_WRITER=1). */
export function pullWriterEnabled(): boolean {
  return process.env.FERRY_PULL_WRITER === "1";
}
