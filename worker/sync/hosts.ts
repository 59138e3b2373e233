/** The hosts table: each host's acknowledged cursor, how far it has pulled, and when it was last heard from. */
import { type Cursor, ORIGIN } from "../../protocol/cursor.ts";
import { uniqueLabel } from "../../protocol/label.ts";
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

/**
 * Records that `hostId` was heard from at `now` (hello), and how far it has
 * pulled when it says (`pulled`: its pull position's whole revs, in this
 * history); a new host starts at ORIGIN. No write when neither moved.
 */
export function recordSeen(db: Db, hostId: Uint8Array, now: number, pulled?: number): void {
  db.exec(
    `INSERT INTO hosts (id, acked_rev, acked_path, last_seen, pulled_rev) VALUES (?1, 0, NULL, ?2, ?3)
     ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, pulled_rev = coalesce(?3, pulled_rev)
     WHERE last_seen < ?2 - ${SEEN_REFRESH_MS} OR ?3 IS NOT NULL AND pulled_rev IS NOT ?3`,
    hostId,
    now,
    pulled ?? null,
  );
}

/**
 * Moves `hostId`'s acknowledged cursor to `acked` (push), and its pull
 * position to `pulled` when the push says it: one row written.
 */
export function recordAcked(db: Db, hostId: Uint8Array, acked: Cursor, now: number, pulled?: number): void {
  db.exec(
    `INSERT INTO hosts (id, acked_rev, acked_path, last_seen, pulled_rev) VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT (id) DO UPDATE SET acked_rev = excluded.acked_rev, acked_path = excluded.acked_path,
       last_seen = excluded.last_seen, pulled_rev = coalesce(?5, pulled_rev)`,
    hostId,
    acked.rev,
    acked.path,
    now,
    pulled ?? null,
  );
}

/**
 * A pull by `hostId` reached the end of the changes (changes' last page):
 * it now holds every change through `rev`. Writes only when that moves its
 * known position, and only for a host some hello or push recorded.
 */
export function recordPulled(db: Db, hostId: Uint8Array, rev: number): void {
  db.exec(`UPDATE hosts SET pulled_rev = ?2 WHERE id = ?1 AND (pulled_rev IS NULL OR pulled_rev < ?2)`, hostId, rev);
}

/** The label held for `hostId`, or undefined (a host that never asked for one, or never said hello). */
export function readLabel(db: Db, hostId: Uint8Array): string | undefined {
  return db.exec<{ label: string }>(`SELECT label FROM host_labels WHERE id = ?`, hostId).rows[0]?.label;
}

/**
 * Gives `hostId` the label it asks for, or that label
 * with the smallest free `-N` when another host holds it, and returns it. A
 * host that already holds the label, or one made from it, keeps what it has:
 * no write on a repeated hello.
 */
export function assignLabel(db: Db, hostId: Uint8Array, wanted: string): string {
  const held = readLabel(db, hostId);
  if (held !== undefined && (held === wanted || isSuffixed(held, wanted))) return held;
  const label = uniqueLabel(
    wanted,
    (candidate) => db.exec(`SELECT 1 FROM host_labels WHERE label = ? AND id <> ?`, candidate, hostId).rows.length > 0,
  );
  db.exec(`INSERT OR REPLACE INTO host_labels (id, label) VALUES (?, ?)`, hostId, label);
  return label;
}

/** `laptop-2` is `laptop` with a suffix. */
function isSuffixed(held: string, wanted: string): boolean {
  return held.startsWith(`${wanted}-`) && /^\d+$/.test(held.slice(wanted.length + 1));
}
