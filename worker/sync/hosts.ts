/** The hosts table: each host's acknowledged cursor and when it was last heard from. */
import { type Cursor, ORIGIN } from "../../protocol/cursor.ts";
import type { Db } from "./db.ts";

/** The host cursor acknowledged for `hostId`; ORIGIN for a host never seen. */
export function readAcked(db: Db, hostId: Uint8Array): Cursor {
  const row = db.exec<{ rev: number; path: string | null }>(
    `SELECT acked_rev AS rev, acked_path AS path FROM hosts WHERE id = ?`,
    hostId,
  ).rows[0];
  return row ? { rev: row.rev, path: row.path } : ORIGIN;
}

/**
 * How stale `last_seen` may get before hello rewrites it. Writes are billed
 * at 1,000x reads, and every restore says hello: a host heard from within the
 * last minute costs no write.
 */
export const SEEN_REFRESH_MS = 60_000;

/** Records that `hostId` was heard from at `now` (hello); a new host starts at ORIGIN. */
export function recordSeen(db: Db, hostId: Uint8Array, now: number): void {
  db.exec(
    `INSERT INTO hosts (id, acked_rev, acked_path, last_seen) VALUES (?1, 0, NULL, ?2)
     ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen WHERE last_seen < ?2 - ${SEEN_REFRESH_MS}`,
    hostId,
    now,
  );
}

/** Moves `hostId`'s acknowledged cursor to `acked` (push): one row written. */
export function recordAcked(db: Db, hostId: Uint8Array, acked: Cursor, now: number): void {
  db.exec(
    `INSERT INTO hosts (id, acked_rev, acked_path, last_seen) VALUES (?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET acked_rev = excluded.acked_rev, acked_path = excluded.acked_path,
       last_seen = excluded.last_seen`,
    hostId,
    acked.rev,
    acked.path,
    now,
  );
}
