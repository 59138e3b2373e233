/**
 * The storage port every sync operation runs on. The workspace object adapts
 * Durable Object SQLite to it (worker/do/sql-db.ts); operations take only
 * this port and an injected clock, so another adapter (a Node SQLite one, not
 * written yet) could run them too. Blobs cross it as Uint8Array.
 */
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
}

/**
 * Durable Object SQLite refuses statements with more than 100 bound
 * parameters, SQL text over 100 KB, and one value over about 2 MB.
 */
export const MAX_PARAMS = 100;
export const MAX_VALUE_BYTES = 2_000_000;
