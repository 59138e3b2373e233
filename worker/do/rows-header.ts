/**
 * Per-request SQL counts for the benchmarks (bench/rows.ts, bench/probe.ts):
 * the object measures what one call cost its SQLite — statements, and the
 * cursors' rowsRead and rowsWritten, which are what Durable Object SQLite
 * bills — and they go back in the `x-ferry-rows` response header
 * as `read,written,statements`. Counts are deltas of the object's meter
 * around one call; the benchmarks send one request at a time, so no other
 * call's statements fall inside the window.
 */
import type { Meter } from "../sync/metered-db.ts";

export const ROWS_HEADER = "x-ferry-rows";

export interface Metered {
  /** `rowsRead,rowsWritten,statements` of this call. */
  readonly rows: string;
}

/** Runs one call and attaches what it cost the meter. */
export async function metered<T extends object>(meter: Meter, call: () => Promise<T>): Promise<T & Metered> {
  const before = { ...meter };
  const result = await call();
  const rows = `${meter.rowsRead - before.rowsRead},${meter.rowsWritten - before.rowsWritten},${meter.statements - before.statements}`;
  return { ...result, rows };
}
