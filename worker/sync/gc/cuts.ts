/**
 * Times to revs for the collector: retention is set in time, history is
 * kept by rev. `revs` (schema migration 3) records when each rev committed.
 * And when what a run kept expires (collect.ts schedules the next run).
 */
import type { Db } from "../db.ts";

/**
 * The newest rev such that it and every rev before it committed before
 * `time`: what a retention cut may drop up to. A rev whose time went
 * backwards (a clock step) only makes the cut earlier, never later.
 */
export function revCutBefore(db: Db, time: number, currentRev: number): number {
  const first = db.exec<{ rev: number | null }>(`SELECT min(rev) AS rev FROM revs WHERE at >= ?`, time).rows[0]?.rev;
  return first === null || first === undefined ? currentRev : first - 1;
}

/** When `rev` committed, or null when this storage has no record of it. */
export function revTime(db: Db, rev: number): number | null {
  return db.exec<{ at: number }>(`SELECT at FROM revs WHERE rev = ?`, rev).rows[0]?.at ?? null;
}

export function older(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}

/** When something kept because `rev` is recent expires: rev's time plus the window. */
export function dueAt(db: Db, rev: number | null, windowMs: number): number | null {
  if (rev === null) return null;
  const at = revTime(db, rev);
  return at === null ? null : at + windowMs;
}
