import type { Db, Result, Row, SqlValue } from "./db.ts";

/** Statements run and rows billed: reads, and writes (index rows included). */
export interface Meter {
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

/**
 * Counts what passes through to another Db. The workspace object keeps one
 * for its lifetime (worker/do/rows-header.ts reports a call's cost as the
 * meter's delta across it, exact because the object runs one call's SQL at
 * a time: every statement is synchronous, between awaits; tests read it).
 * A collection keeps its own over the object's (gc/collect.ts), so it
 * reports its cost even while pushes run between its slices.
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
