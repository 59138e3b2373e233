import type { Db, Result, Row, SqlValue } from "../sync/db.ts";

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
      // Converted in place: a new object per row would cost a pull of many rows twice the allocations.
      const row: Record<string, SqlValue | ArrayBuffer> = raw;
      for (const key in row) {
        const value = row[key];
        if (value instanceof ArrayBuffer) row[key] = new Uint8Array(value);
      }
      rows.push(row as T);
    }
    // The counts are final only once the cursor is exhausted, as it is here.
    return { rows, rowsRead: cursor.rowsRead, rowsWritten: cursor.rowsWritten };
  }

  transaction<T>(fn: () => T): T {
    return this.storage.transactionSync(fn);
  }
}
