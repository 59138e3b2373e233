/**
 * The histories this workspace deleted (PROTOCOL.md §7.10): `DELETE` keeps
 * the epoch of each (worker/do/admin.ts) through the wipe of its storage, and
 * hello refuses a host whose pull position is in one with `workspace_deleted`
 * (hello.ts), so that a host left running does not push its tree back into
 * the workspace a person just deleted. A row is 16 bytes and a time: they
 * are kept for as long as the workspace's object lives.
 */
import type { Db } from "./db.ts";

export interface DeletedHistory {
  readonly epoch: Uint8Array;
  /** When it was deleted, ms since the Unix epoch (the injected clock). */
  readonly at: number;
}

export function readDeletedHistories(db: Db): DeletedHistory[] {
  return db
    .exec<{ epoch: Uint8Array; at: number }>(`SELECT epoch, at FROM deleted_histories`)
    .rows.map((r) => ({ epoch: new Uint8Array(r.epoch), at: r.at }));
}

/** Called after the wipe, into the new history's fresh schema. */
export function recordDeletedHistories(db: Db, histories: readonly DeletedHistory[]): void {
  db.transaction(() => {
    for (const h of histories)
      db.exec(`INSERT OR REPLACE INTO deleted_histories (epoch, at) VALUES (?, ?)`, h.epoch, h.at);
  });
}

/** When the history named by `epoch` was deleted here, or null when it was not (one seek on the key). */
export function deletedAt(db: Db, epoch: Uint8Array): number | null {
  const row = db.exec<{ at: number }>(`SELECT at FROM deleted_histories WHERE epoch = ?`, epoch).rows[0];
  return row ? row.at : null;
}
