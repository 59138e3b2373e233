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

/** Records that `hostId` was heard from at `now` (hello); a new host starts at ORIGIN. */
export function recordSeen(db: Db, hostId: Uint8Array, now: number): void {
  db.exec(
    `INSERT INTO hosts (id, acked_rev, acked_path, last_seen) VALUES (?, 0, NULL, ?)
     ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen`,
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
