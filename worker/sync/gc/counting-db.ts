import type { Db, Result, Row, SqlValue } from "../db.ts";

/**
 * The collector's view of the storage port: counts the rows its own
 * statements read and write (billed as any other), so a collection reports
 * its cost even while pushes run between its slices.
 */
export class CountingDb implements Db {
  rowsRead = 0;
  rowsWritten = 0;

  constructor(private readonly inner: Db) {}

  exec<T extends Row = Row>(sql: string, ...params: SqlValue[]): Result<T> {
    const result = this.inner.exec<T>(sql, ...params);
    this.rowsRead += result.rowsRead;
    this.rowsWritten += result.rowsWritten;
    return result;
  }

  transaction<T>(fn: () => T): T {
    return this.inner.transaction(fn);
  }
}
