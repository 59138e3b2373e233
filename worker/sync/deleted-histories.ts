/**
 * The histories this workspace deleted (PROTOCOL.md §7.10): `DELETE` keeps
 * the epoch of each (worker/do/admin.ts) through the wipe of its storage, and
 * hello refuses a host whose pull position is in one with `workspace_deleted`
 * (hello.ts), so that a host left running does not push its tree back into
 * the workspace a person just deleted. The ids of the hosts the deleted
 * history knew are kept too: a host that only pushed (never pulled) has no
 * position to name it by. A row is 16 bytes and a time: they are kept for as
 * long as the workspace's object lives.
 */
import type { PullPosition } from "../../protocol/hello.ts";
import type { Db } from "./db.ts";

export interface DeletedHistory {
  readonly epoch: Uint8Array;
  /** When it was deleted, ms since the Unix epoch (the injected clock). */
  readonly at: number;
}

/** What the workspace remembers of the histories it deleted: their epochs and their hosts, each with when. */
export interface DeletedMarks {
  readonly histories: readonly DeletedHistory[];
  readonly hosts: readonly { readonly id: Uint8Array; readonly at: number }[];
}

/** Before the wipe: the marks kept so far, and the current history's epoch and hosts, deleted `at`. */
export function marksAfterDeleting(db: Db, epoch: Uint8Array, at: number): DeletedMarks {
  const histories = db.exec<{ epoch: Uint8Array; at: number }>(`SELECT epoch, at FROM deleted_histories`).rows;
  const hosts = db.exec<{ id: Uint8Array; at: number }>(`SELECT id, at FROM deleted_hosts`).rows;
  const current = db.exec<{ id: Uint8Array }>(`SELECT id FROM hosts`).rows.map((r) => ({ id: r.id, at }));
  return { histories: [...histories, { epoch, at }], hosts: [...hosts, ...current] };
}

/** After the wipe, into the new history's fresh schema: one row a statement (two parameters each). */
export function recordDeletedMarks(db: Db, marks: DeletedMarks): void {
  db.transaction(() => {
    for (const h of marks.histories)
      db.exec(`INSERT OR REPLACE INTO deleted_histories (epoch, at) VALUES (?, ?)`, h.epoch, h.at);
    for (const h of marks.hosts) db.exec(`INSERT OR REPLACE INTO deleted_hosts (id, at) VALUES (?, ?)`, h.id, h.at);
  });
}

/**
 * When the history this host last synced was deleted here, or null. With a
 * pull position, its epoch says (one seek); without one, the host id does,
 * unless the host has been heard from in the current history since.
 */
export function deletedAt(db: Db, hostId: Uint8Array, pull: PullPosition | undefined): number | null {
  const row = pull
    ? db.exec<{ at: number }>(`SELECT at FROM deleted_histories WHERE epoch = ?`, pull.epoch).rows[0]
    : db.exec<{ at: number }>(
        `SELECT at FROM deleted_hosts WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM hosts WHERE id = ?1)`,
        hostId,
      ).rows[0];
  return row ? row.at : null;
}
