/**
 * A workspace's storage is made by its first write, not by whoever first
 * names it (PROTOCOL.md §7): a read of a workspace never written (a typo, a
 * `*` read token naming made-up workspaces) answers as an empty workspace
 * and stores nothing. The object (workspace.ts) holds one of these; the door
 * (door.ts) creates the storage before a write and runs a read before it
 * through `read`.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { ID_BYTES } from "../../protocol/hello.ts";
import type { Db, StorageCreation } from "../sync/db.ts";
import { migrate } from "./schema.ts";

export class Creation implements StorageCreation {
  /** Whether the storage holds the schema: it was written, or migrated before ferry made it lazily. */
  created: boolean;
  /**
   * The epoch the first write creates, and that a read before it answers: derived from the object's id,
   * so that a host that said hello to the workspace before anyone wrote it keeps a position the first
   * write does not invalidate, even when the object restarted between (PROTOCOL.md §4.1).
   */
  readonly firstEpoch: Uint8Array;

  constructor(
    private readonly db: Db,
    objectId: string,
  ) {
    // A read of the catalogue: it writes nothing.
    this.created =
      db.exec(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).rows.length > 0;
    this.firstEpoch = sha256(new TextEncoder().encode(`ferry epoch ${objectId}`)).slice(0, ID_BYTES);
    // Storage made by an older build moves to the current schema now, as it always did.
    if (this.created) migrate(db, this.firstEpoch);
  }

  /** Before a write: the schema and the first epoch, once. */
  create(): void {
    if (this.created) return;
    migrate(this.db, this.firstEpoch);
    this.created = true;
  }

  /**
   * A read. Before the first write it runs against the schema made in a
   * transaction rolled back after it: the answer of an empty workspace,
   * computed by the same code as any other, with nothing stored. Only the
   * part of `read` before its first await runs inside; what an empty
   * workspace's reads await (objects/get's bytes) touches no table.
   */
  read<T>(read: () => T): T {
    if (this.created) return read();
    let answer: { value: T } | null = null;
    try {
      this.db.transaction(() => {
        migrate(this.db, this.firstEpoch);
        answer = { value: read() };
        // Thrown so that the transaction rolls back: caught below, with the answer kept.
        throw new Error("roll back");
      });
    } catch (e) {
      if (answer === null) throw e;
    }
    return (answer as unknown as { value: T }).value;
  }
}
