import type { Db, Result, Row, SqlValue } from "../sync/db.ts";

/** Totals since the object started: what this workspace has been billed for. */
export interface Meter {
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

/**
 * Durable Object SQLite behind the Db port. Blobs come back from workerd as
 * ArrayBuffer and leave here as Uint8Array. The meter is read by tests that
 * count statements and billed rows.
 */
export class DurableObjectDb implements Db {
  readonly meter: Meter = { statements: 0, rowsRead: 0, rowsWritten: 0 };

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
    this.meter.statements++;
    this.meter.rowsRead += cursor.rowsRead;
    this.meter.rowsWritten += cursor.rowsWritten;
    return { rows, rowsRead: cursor.rowsRead, rowsWritten: cursor.rowsWritten };
  }

  transaction<T>(fn: () => T): T {
    return this.storage.transactionSync(fn);
  }
}
