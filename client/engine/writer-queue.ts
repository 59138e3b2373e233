/**
 * The applier's side of the batch writer (batch-writer.ts): new files are
 * gathered into batches of bounded bytes, one batch at the worker while the
 * next fills. A file is recorded (its record, its chunks' place for later
 * files) only once the worker placed it; one it could not place is handed
 * back to the applier to apply again on the main thread.
 *
 * Order is kept where it matters: a change at, above or below a path still
 * being written waits for the queue to empty first (`mustWait`), so every
 * decision sees the disk and the records as the one-thread pull would.
 */
import type { BigIntStats } from "node:fs";
import type { Change } from "../../protocol/changes.ts";
import type { BatchWriter, WriterFile, WriterResult } from "./batch-writer.ts";
import type { MergeMode } from "./decide.ts";
import type { ObjectParts } from "./fetch-objects.ts";

/** Bytes of one batch at most (files are at most WRITER_MAX_FILE_BYTES each). */
const BATCH_BYTES = 4 * 1024 * 1024;
/** Files of one batch at most. */
const BATCH_FILES = 64;
/** Larger files are written on the main thread (write-file.ts), window by window. */
export const WRITER_MAX_FILE_BYTES = 1024 * 1024;

/** A new file handed to the writer, with what recording it needs. */
export interface QueuedFile {
  readonly change: Change & { kind: "file" };
  readonly agreed: Uint8Array;
  /** The merge mode it was applied with, to apply it again with. */
  readonly mode: MergeMode;
  readonly file: Omit<WriterFile, "offset" | "size">;
  readonly parts: readonly ObjectParts[];
  readonly size: number;
}

interface Batch {
  readonly queued: QueuedFile[];
  readonly files: WriterFile[];
  bytes: number;
}

export class WriterQueue {
  private filling: Batch = emptyBatch();
  private atWorker: Promise<void> | null = null;
  /** Paths queued and not yet placed or handed back. */
  private readonly paths = new Set<string>();
  /** Every ancestor directory of a queued path, with how many queued paths are under it. */
  private readonly dirs = new Map<string, number>();
  /** Files the worker could not place, to apply again on the main thread. */
  private handedBack: QueuedFile[] = [];

  constructor(
    private readonly writer: BatchWriter,
    /** A file placed: `stat` is its descriptor's fstat before the link. */
    private readonly placed: (q: QueuedFile, stat: BigIntStats | null) => void,
    /** A file the worker could not place (nothing of it is left on disk). */
    private readonly refused: (q: QueuedFile) => void,
    /** Each file of a batch, right before the batch goes to the worker (before its link). */
    private readonly sending: (q: QueuedFile) => void,
  ) {}

  /** True when a change at `path` must wait until every queued file is placed or handed back. */
  mustWait(path: string): boolean {
    if (this.paths.size === 0) return false;
    if (this.paths.has(path) || this.dirs.has(path)) return true;
    for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) {
      if (this.paths.has(path.slice(0, i))) return true;
    }
    return false;
  }

  /** Queues a file; sends the batch when full (after the one at the worker is back). */
  async add(q: QueuedFile): Promise<void> {
    const path = q.change.path;
    this.paths.add(path);
    for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) {
      const dir = path.slice(0, i);
      this.dirs.set(dir, (this.dirs.get(dir) ?? 0) + 1);
    }
    const b = this.filling;
    b.files.push({ ...q.file, offset: b.bytes, size: q.size });
    b.queued.push(q);
    b.bytes += q.size;
    if (b.bytes >= BATCH_BYTES || b.files.length >= BATCH_FILES) await this.send();
  }

  /** Files handed back since the last call, to apply again. */
  takeHandedBack(): QueuedFile[] {
    const back = this.handedBack;
    this.handedBack = [];
    for (const q of back) this.forget(q.change.path);
    return back;
  }

  /** Sends what is queued and waits until the worker has answered all of it. */
  async drain(): Promise<void> {
    if (this.filling.files.length > 0) await this.send();
    await this.atWorker;
  }

  private async send(): Promise<void> {
    await this.atWorker;
    const b = this.filling;
    this.filling = emptyBatch();
    for (const q of b.queued) this.sending(q);
    const bytes = new Uint8Array(b.bytes);
    let at = 0;
    for (const q of b.queued) {
      for (const o of q.parts) {
        for (const p of o.parts) {
          bytes.set(p, at);
          at += p.byteLength;
        }
      }
    }
    this.atWorker = this.writer.write(b.files, bytes.buffer).then((results) => this.settle(b, results));
    // A worker that died rejects here: drain's await rethrows it.
    this.atWorker.catch(() => {});
  }

  private settle(b: Batch, results: readonly WriterResult[]): void {
    b.queued.forEach((q, i) => {
      const r = results[i] as WriterResult;
      if (r.code === undefined) {
        this.forget(q.change.path);
        this.placed(q, r.stat);
      } else {
        this.refused(q);
        this.handedBack.push(q);
      }
    });
  }

  private forget(path: string): void {
    this.paths.delete(path);
    for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) {
      const dir = path.slice(0, i);
      const n = (this.dirs.get(dir) ?? 1) - 1;
      if (n === 0) this.dirs.delete(dir);
      else this.dirs.set(dir, n);
    }
  }
}

function emptyBatch(): Batch {
  return { queued: [], files: [], bytes: 0 };
}
