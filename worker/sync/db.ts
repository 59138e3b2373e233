/**
 * The storage port every sync operation runs on. The workspace object adapts
 * Durable Object SQLite to it (worker/do/sql-db.ts); the sync core's tests
 * also run on better-sqlite3 in Node (test/core/node-db.ts), which enforces
 * SQLITE_LIMITS with workerd's messages. Operations take only this port and
 * an injected clock. Blobs cross it as Uint8Array; numbers are bound as REAL
 * by both adapters.
 */

import type { Capacity } from "./capacity.ts";
import type { PackedUpload, PackStore } from "./pack-store.ts";

export type SqlValue = string | number | null | Uint8Array;
export type Row = Record<string, SqlValue>;

export interface Result<T extends Row> {
  readonly rows: T[];
  readonly rowsRead: number;
  readonly rowsWritten: number;
}

export interface Db {
  /** Runs one statement to completion. */
  exec<T extends Row = Row>(sql: string, ...params: SqlValue[]): Result<T>;
  /** Runs `fn` in one transaction: all of its writes commit, or none do if it throws. */
  transaction<T>(fn: () => T): T;
}

/**
 * A workspace's storage is made by its first write (worker/do/creation.ts):
 * the door creates it before a write, and runs a read before it through
 * `read`, which answers as an empty workspace and stores nothing.
 */
export interface StorageCreation {
  readonly created: boolean;
  create(): void;
  read<T>(read: () => T): T;
}

/** What an operation needs besides its request: storage and the time. */
export interface SyncContext {
  readonly db: Db;
  /** Milliseconds since the Unix epoch; injected so tests can pin it. */
  readonly now: () => number;
  /**
   * The caller's token can only read (the object sets it per call). hello
   * then records no host row: a reader must not grow the hosts table.
   */
  readonly readOnly?: boolean;
  /**
   * Called inside the transaction of every write that stored something (an
   * applied push, with the chunks its entries name; an upload that stored
   * objects, with none). The workspace object's collector marks the chunks
   * and schedules a collection (worker/do/collector.ts); tests of single
   * operations leave it out.
   */
  readonly onWrite?: (referenced: Iterable<Uint8Array>) => void;
  /** The storage cap new object bytes must fit under (capacity.ts); tests of single operations leave it out. */
  readonly capacity?: Capacity;
  /** The workspace's packs in R2 when the object has a bucket bound (pack-store.ts); absent, every pack is in SQLite. */
  readonly packStore?: PackStore;
  /**
   * A push's inline objects, already in R2 packs (worker/r2/push-route.ts,
   * push.ts): recorded in the push's own transaction if it commits (apply.ts).
   */
  readonly packed?: PackedUpload;
  /**
   * Called when the object itself verifies an upload's or a push's objects
   * and writes them to R2 (objects.ts, push.ts): a socket frame from a host
   * that does not send its bytes over HTTP (PROTOCOL.md §7.9). The object
   * counts them for stats (`ingestedByObject`).
   */
  readonly onIngest?: () => void;
  /** The workspace object's storage, made by its first write (StorageCreation); tests of single operations leave it out. */
  readonly creation?: StorageCreation;
}

/**
 * What Durable Object SQLite refuses, as measured in workerd (the core
 * suite's limits test runs on both adapters, test/core/suites/limits.ts):
 * more than 100 bound parameters ("too many SQL variables"), SQL text over
 * 100,000 bytes ("statement too long: SQLITE_TOOBIG"), and a string, blob or
 * row over 2,200,000 bytes ("string or blob too big: SQLITE_TOOBIG") in
 * workerd 1.20260815; 1.20261102 takes up to 8,388,642. Cloudflare documents
 * 2 MB for a row: ferry keeps under MAX_VALUE_BYTES whatever the runtime
 * allows, and the Node adapter refuses past the lowest bound measured.
 */
export const SQLITE_LIMITS = { params: 100, statementBytes: 100_000, valueBytes: 2_200_000 } as const;

/** Bound parameters a statement may use (SQLITE_LIMITS.params). */
export const MAX_PARAMS = SQLITE_LIMITS.params;
/** What ferry puts in one SQL value: SQLITE_LIMITS.valueBytes less a margin for the row around it. */
export const MAX_VALUE_BYTES = 2_000_000;
