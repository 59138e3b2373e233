/**
 * What a collection run records when it ends (collect.ts, inside its last
 * slice's transaction): the run's summary, and when the next is due — the
 * earliest moment something it kept (a version, a tombstone, an upload in
 * its grace) expires.
 */
import type { Db } from "../db.ts";
import type { Retention } from "../retention.ts";
import { dueAt } from "./cuts.ts";
import { type Freed, type LastCollection, readCollectorRecord, writeCollectorRecord } from "./summary.ts";

export interface RunEnd {
  readonly startedAt: number;
  readonly rev: number;
  readonly lastPack: number;
  readonly freed: Freed;
  /** Whether the run listed the whole R2 prefix (the next listing is a pack grace after it started). */
  readonly listed: boolean;
  /** The oldest rev whose version or tombstone it kept, and the oldest upload time in its grace. */
  readonly oldest: {
    readonly version: number | null;
    readonly tombstone: number | null;
    readonly grace: number | null;
  };
}

export function recordRunEnd(db: Db, retention: Retention, end: RunEnd, now: number): void {
  const due = [
    dueAt(db, end.oldest.version, retention.historyMs),
    dueAt(db, end.oldest.tombstone, retention.horizonMs),
    end.oldest.grace === null ? null : end.oldest.grace + retention.graceMs,
  ].filter((t): t is number => t !== null);
  const last: LastCollection = {
    startedAt: end.startedAt,
    endedAt: now,
    rev: end.rev,
    lastPack: end.lastPack,
    nextDueAt: due.length > 0 ? Math.min(...due) : null,
    freed: { ...end.freed },
  };
  const record = readCollectorRecord(db);
  const listedAt = end.listed ? end.startedAt : record.listedAt;
  writeCollectorRecord(db, { ...record, last, running: null, ...(listedAt === undefined ? {} : { listedAt }) });
}
