/**
 * Slots for pulled files written off the main thread (pooled-write.ts):
 * up to `size` new files have their temporary written on libuv's thread
 * pool while the applier decides the next entries (issue 13: a pull's host
 * was the bottleneck on one core while the other sat idle). Zero slots is
 * the synchronous path, every file written and placed before the next
 * entry is looked at.
 *
 * What keeps a pull exact with writes in flight (apply.ts, pull.ts):
 * - an entry at, above or below a path being written waits for that write
 *   (`overlaps`), as does anything that is not a plain new file or a
 *   directory (a removal may empty a directory a pending file goes into,
 *   a conflict copy takes a name beside its path);
 * - a pending file's chunks are noted for reading back (fetcher.remember)
 *   and its record set only once it is placed, so every fetcher load and
 *   every flush of the page's records waits for all of them (`drain`).
 */

/**
 * The number of slots: FERRY_WRITE_SLOTS (an internal tuning knob for the
 * benchmarks and the tests, not a user setting), 0 when unset.
 */
export function writeSlotsFromEnv(): number {
  const n = Number(process.env.FERRY_WRITE_SLOTS ?? 0);
  return Number.isInteger(n) && n > 0 ? Math.min(n, 64) : 0;
}

export class WriteSlots {
  /** Paths being written, with the promise that settles once each is placed or refused (never rejects). */
  private readonly pending = new Map<string, Promise<void>>();
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** True when `path` is, or lies above or below, a path being written. */
  overlaps(path: string): boolean {
    if (this.pending.size === 0) return false;
    const under = `${path}/`;
    for (const p of this.pending.keys()) {
      if (p === path || p.startsWith(under) || path.startsWith(`${p}/`)) return true;
    }
    return false;
  }

  /** Resolves once a slot is free. */
  async free(): Promise<void> {
    while (this.pending.size >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Holds a slot for `path` until `job` settles; `job` handles its own failure and never rejects. */
  start(path: string, job: Promise<void>): void {
    const held = job.finally(() => {
      this.pending.delete(path);
      this.waiting.shift()?.();
    });
    this.pending.set(path, held);
  }

  /** Resolves once every write started so far is placed or refused. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending.values());
  }
}
