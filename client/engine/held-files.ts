/**
 * Files a push leaves for a later sync, so that one file never stops the
 * rest of the push (push.ts):
 *
 * - a file that keeps changing while it is read for upload (a log, a live
 *   database): a chunk that no longer matches its hash means the file
 *   changed since the scan, so it is read again and re-stamped and the pack
 *   rebuilt; after MAX_REREADS it is held;
 * - a file with more chunks than the server lets one file have
 *   (`maxFileChunks`, PROTOCOL.md §4.5 rule 4): the server would refuse
 *   every pack holding it.
 *
 * A held file is reported as skipped and stays pending above every pack
 * this push sends (`ahead` never sends past it), so the next sync tries it
 * again; chunks of it uploaded meanwhile are left to the server's
 * collection (unreferenced uploads).
 */
import type { PathRecord } from "../store/store.ts";
import type { EngineContext } from "./context.ts";
import { stampScan } from "./stamp.ts";

/** Times one file may change under its upload before this push holds it. */
const MAX_REREADS = 3;

export class HeldFiles {
  private readonly rereads = new Map<string, number>();
  private readonly held = new Set<string>();

  constructor(private readonly ctx: EngineContext) {}

  /** Reads a file that changed under its upload again; holds it once it has changed too often. */
  changed(path: string): void {
    const n = (this.rereads.get(path) ?? 0) + 1;
    this.rereads.set(path, n);
    // Re-stamped either way: its record is fresh, and its host rev is behind every pack still to send.
    stampScan(this.ctx.store, this.ctx.scanner.scan(path));
    if (n >= MAX_REREADS) this.hold(path, `changed while it was read, ${n} times; sent next sync`);
  }

  /**
   * Holds the first file of `pending` that has more chunks than the server
   * takes for one file; false when there is none.
   */
  holdOversized(pending: readonly PathRecord[]): boolean {
    const max = this.ctx.server.limits.maxFileChunks;
    const over = pending.find((r) => r.entry.kind === "file" && r.entry.chunks.length > max);
    if (over?.entry.kind !== "file") return false;
    this.hold(over.entry.path, `${over.entry.chunks.length} chunks, more than the server's ${max} for one file`);
    return true;
  }

  private hold(path: string, reason: string): void {
    if (this.held.has(path)) return;
    this.held.add(path);
    this.ctx.report.skipped.push({ path, reason });
  }

  /**
   * Pending records to pack next: those before the first held one. A held
   * record at the head moves behind the rest (a new host rev); null when
   * only held records remain.
   */
  ahead(limit: number): PathRecord[] | null {
    const { store } = this.ctx;
    for (;;) {
      const pending = store.pending(this.ctx.acked.rev, limit + this.held.size);
      const first = pending.findIndex((r) => this.held.has(r.entry.path));
      if (first < 0) return pending.slice(0, limit);
      if (first > 0) return pending.slice(0, Math.min(first, limit));
      if (pending.every((r) => this.held.has(r.entry.path))) return null;
      const head = pending[0] as PathRecord;
      store.put({ ...head, hostRev: store.reserveHostRevs(1) });
    }
  }
}
