/** The meta table: facts about the workspace that worker/do/schema.ts creates. */
import type { Db } from "./db.ts";

/** The server epoch: 16 random bytes created with the storage. */
export function readEpoch(db: Db): Uint8Array {
  const row = db.exec<{ value: Uint8Array }>(`SELECT value FROM meta WHERE key = 'epoch'`).rows[0];
  // migrate() creates the epoch before any operation runs.
  if (!row) throw new Error("workspace has no epoch: schema not migrated");
  return row.value;
}
