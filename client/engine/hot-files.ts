/**
 * Files that kept changing while the push read them (push.ts). A chunk that
 * no longer matches its hash when the push reads it for upload means its
 * file changed since the scan: the file is read again and re-stamped, and
 * the pack rebuilt. After MAX_REREADS the file is skipped for this push and
 * reported, and the rest commits.
 */

import type { PathRecord } from "../store/store.ts";
import type { EngineContext } from "./context.ts";
import { stampScan } from "./stamp.ts";

/** Times one file may change under its upload before this push skips it. */
const MAX_REREADS = 3;

/**
 * The hot files of one push (a log, a live database). A skipped file stays
 * pending above every pack this push sends (`ahead` never sends past it),
 * so the next sync tries it again; its chunks uploaded before it changed
 * are left to the server's collection (unreferenced uploads).
 */
export class HotFiles {
  private readonly rereads = new Map<string, number>();
  private readonly skipped = new Set<string>();

  constructor(private readonly ctx: EngineContext) {}

  /** Reads a file that changed under its upload again; skips it once it has changed too often. */
  changed(path: string): void {
    const n = (this.rereads.get(path) ?? 0) + 1;
    this.rereads.set(path, n);
    // Re-stamped either way: its record is fresh, and its host rev is behind every pack still to send.
    stampScan(this.ctx.store, this.ctx.scanner.scan(path));
    if (n >= MAX_REREADS && !this.skipped.has(path)) {
      this.skipped.add(path);
      this.ctx.report.skipped.push({ path, reason: `changed while it was read, ${n} times; sent next sync` });
    }
  }

  /**
   * Pending records to pack next: those before the first skipped one. A
   * skipped record at the head moves behind the rest (a new host rev); null
   * when only skipped records remain.
   */
  ahead(limit: number): PathRecord[] | null {
    const { store } = this.ctx;
    for (;;) {
      const pending = store.pending(this.ctx.acked.rev, limit + this.skipped.size);
      const first = pending.findIndex((r) => this.skipped.has(r.entry.path));
      if (first < 0) return pending.slice(0, limit);
      if (first > 0) return pending.slice(0, Math.min(first, limit));
      if (pending.every((r) => this.skipped.has(r.entry.path))) return null;
      const head = pending[0] as PathRecord;
      store.put({ ...head, hostRev: store.reserveHostRevs(1) });
    }
  }
}
