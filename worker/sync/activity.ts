/**
 * activity (GET, PROTOCOL.md §7.6): revs, entries and file bytes written per hour over
 * the last ACTIVITY_HOURS, for the page's chart. Walks `revs` newest first
 * (its primary key) and stops at the window's start or after
 * MAX_ACTIVITY_REVS rows, so a busy workspace costs a bounded read.
 */
import { ACTIVITY_HOURS, type Activity } from "../../protocol/browse.ts";
import type { SyncContext } from "./db.ts";

const HOUR_MS = 3_600_000;
export const MAX_ACTIVITY_REVS = 20_000;
const BATCH = 1000;

export function readActivity({ db, now }: SyncContext): Activity {
  const from = (Math.floor(now() / HOUR_MS) - (ACTIVITY_HOURS - 1)) * HOUR_MS;
  const revs = new Array<number>(ACTIVITY_HOURS).fill(0);
  const entries = new Array<number>(ACTIVITY_HOURS).fill(0);
  const bytes = new Array<number>(ACTIVITY_HOURS).fill(0);
  const answer = (truncated: boolean): Activity => ({ from, bucketMs: HOUR_MS, revs, entries, bytes, truncated });
  let before = Number.MAX_SAFE_INTEGER;
  for (let read = 0; read < MAX_ACTIVITY_REVS; read += BATCH) {
    const { rows } = db.exec<{ rev: number; at: number; entries: number; bytes: number }>(
      `SELECT rev, at, entries, bytes FROM revs WHERE rev < ? ORDER BY rev DESC LIMIT ?`,
      before,
      BATCH,
    );
    for (const r of rows) {
      // Revs are committed in clock order, so the first one before the window ends the walk.
      if (r.at < from) return answer(false);
      const bucket = Math.min(ACTIVITY_HOURS - 1, Math.floor((r.at - from) / HOUR_MS));
      revs[bucket] = (revs[bucket] as number) + 1;
      entries[bucket] = (entries[bucket] as number) + r.entries;
      bytes[bucket] = (bytes[bucket] as number) + r.bytes;
    }
    const last = rows[rows.length - 1];
    if (rows.length < BATCH || last === undefined) return answer(false);
    before = last.rev;
  }
  return answer(true);
}
