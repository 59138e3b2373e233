import type { Db, Result, Row, SqlValue } from "../sync/db.ts";

/** Statements run and rows billed: reads, and writes (index rows included). */
export interface Meter {
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

/**
 * Durable Object SQLite behind the Db port. Blobs come back from workerd as
 * ArrayBuffer and leave here as Uint8Array.
 */
export class DurableObjectDb implements Db {
  constructor(private readonly storage: DurableObjectStorage) {}

  exec<T extends Row = Row>(sql: string, ...params: SqlValue[]): Result<T> {
    const cursor = this.storage.sql.exec(sql, ...params);
    const rows: T[] = [];
    for (const raw of cursor) {
      for (const key in raw) {
        const value = raw[key];
        if (value instanceof ArrayBuffer) (raw as Record<string, unknown>)[key] = new Uint8Array(value);
      }
      rows.push(raw as unknown as T);
    }
    // The counts are final only once the cursor is exhausted, as it is here.
    return { rows, rowsRead: cursor.rowsRead, rowsWritten: cursor.rowsWritten };
  }

  transaction<T>(fn: () => T): T {
    return this.storage.transactionSync(fn);
  }
}

/**
 * Counts what passes through to another Db. The object keeps one meter for
 * its lifetime (tests read it); rows-header.ts reports a call's cost as the
 * meter's delta across it, which is exact because the object runs one call's
 * SQL at a time (every statement is synchronous, between awaits).
 */
export class MeteredDb implements Db {
  readonly meter: Meter = { statements: 0, rowsRead: 0, rowsWritten: 0 };

  constructor(private readonly inner: Db) {}

  exec<T extends Row = Row>(sql: string, ...params: SqlValue[]): Result<T> {
    const result = this.inner.exec<T>(sql, ...params);
    this.meter.statements++;
    this.meter.rowsRead += result.rowsRead;
    this.meter.rowsWritten += result.rowsWritten;
    return result;
  }

  transaction<T>(fn: () => T): T {
    return this.inner.transaction(fn);
  }
}
