/**
 * The Db port on better-sqlite3, for running the sync core in Node
 * (test/core/node.test.ts). It refuses what Durable Object SQLite refuses,
 * with workerd's messages, so a statement that would fail in the object
 * fails here too: better-sqlite3 has no sqlite3_limit, so the limits are
 * checked on the way in (parameters, statement bytes, each bound value) and
 * on the way out (each returned value). A row assembled inside SQL from
 * smaller values is the one case only workerd catches; the same suite runs
 * there (test/worker/core/, a file per suite).
 *
 * Counts differ: rowsWritten is SQLite's change count (index rows not
 * included, which workerd bills) and rowsRead the rows returned, so billed
 * counts are asserted in workerd-only tests (test/worker/billing.test.ts).
 */
import Database from "better-sqlite3";
import { type Db, type Result, type Row, SQLITE_LIMITS, type SqlValue } from "../../worker/sync/db.ts";

/** workerd's refusal of SQL transaction statements (state.storage.transactionSync is the way). */
const NO_SQL_TRANSACTIONS =
  "To execute a transaction, please use the state.storage.transaction() or state.storage.transactionSync() APIs instead of the SQL BEGIN TRANSACTION or SAVEPOINT statements. The JavaScript API is safer because it will automatically roll back on exceptions, and because it interacts correctly with Durable Objects' automatic atomic write coalescing.";
const TRANSACTION_STATEMENT = /^\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/i;

export class NodeSqliteDb implements Db {
  private readonly sqlite: Database.Database;
  private readonly prepared = new Map<string, Prepared>();
  private readonly totalChanges: Database.Statement<[], { n: number }>;

  /** An in-memory database unless `file` names one. */
  constructor(file = ":memory:") {
    this.sqlite = new Database(file);
    this.totalChanges = this.sqlite.prepare("SELECT total_changes() AS n");
  }

  exec<T extends Row = Row>(sql: string, ...params: SqlValue[]): Result<T> {
    checkStatement(sql, params);
    const { statement, slots } = this.statement(sql);
    const bound = bindNamed(slots, params);
    const before = this.changes();
    let rows: T[] = [];
    if (statement.reader) rows = statement.all(bound).map((raw) => fromSqlite<T>(raw));
    else statement.run(bound);
    return { rows, rowsRead: rows.length, rowsWritten: this.changes() - before };
  }

  transaction<T>(fn: () => T): T {
    return this.sqlite.transaction(fn)();
  }

  close(): void {
    this.sqlite.close();
  }

  private statement(sql: string): Prepared {
    let prepared = this.prepared.get(sql);
    if (!prepared) {
      const { text, slots } = nameParameters(sql);
      prepared = { statement: this.sqlite.prepare(text), slots };
      this.prepared.set(sql, prepared);
    }
    return prepared;
  }

  private changes(): number {
    return (this.totalChanges.get() as { n: number }).n;
  }
}

interface Prepared {
  readonly statement: Database.Statement;
  /** The highest parameter number the SQL uses: params 1..slots are bound. */
  readonly slots: number;
}

/**
 * better-sqlite3 binds `?` in order and names, but not `?NNN` (which
 * worker/sync uses to bind a hash list once and read it twice). So every
 * parameter becomes the name `@pN`, numbered as SQLite numbers them: `?NNN`
 * is N, a bare `?` one more than the highest so far. Quoted text and
 * comments are left alone.
 */
function nameParameters(sql: string): { text: string; slots: number } {
  let text = "";
  let slots = 0;
  let i = 0;
  while (i < sql.length) {
    const skipped = skipQuotedOrComment(sql, i);
    if (skipped > i || sql[i] !== "?") {
      const end = Math.max(skipped, i + 1);
      text += sql.slice(i, end);
      i = end;
      continue;
    }
    const digits = /^\d*/.exec(sql.slice(i + 1, i + 8))?.[0] ?? "";
    const n = digits === "" ? slots + 1 : Number(digits);
    if (n < 1 || n > SQLITE_LIMITS.params) {
      throw new Error(`variable number must be between ?1 and ?${SQLITE_LIMITS.params}: SQLITE_ERROR`);
    }
    slots = Math.max(slots, n);
    text += `@p${n}`;
    i += 1 + digits.length;
  }
  return { text, slots };
}

/** Where the quoted text or comment starting at `i` ends; `i` when none starts there. */
function skipQuotedOrComment(sql: string, i: number): number {
  const c = sql[i];
  const endOf = (at: number, length: number) => (at === -1 ? sql.length : at + length);
  if (c === "'" || c === '"') return endOf(sql.indexOf(c, i + 1), 1);
  if (sql.startsWith("--", i)) return endOf(sql.indexOf("\n", i), 1);
  if (sql.startsWith("/*", i)) return endOf(sql.indexOf("*/", i + 2), 2);
  return i;
}

function bindNamed(slots: number, params: readonly SqlValue[]): Record<string, SqlValue> {
  // workerd counts bindings against the statement's parameters, as better-sqlite3 does for `?`.
  if (params.length !== slots) throw new Error("Wrong number of parameter bindings for SQL query.");
  const named: Record<string, SqlValue> = {};
  params.forEach((value, i) => {
    named[`p${i + 1}`] = value;
  });
  return named;
}

function checkStatement(sql: string, params: readonly SqlValue[]): void {
  if (TRANSACTION_STATEMENT.test(sql)) throw new Error(NO_SQL_TRANSACTIONS);
  if (Buffer.byteLength(sql) > SQLITE_LIMITS.statementBytes) throw new Error("statement too long: SQLITE_TOOBIG");
  if (params.length > SQLITE_LIMITS.params) throw new Error("too many SQL variables: SQLITE_ERROR");
  for (const value of params) checkLength(value);
}

function checkLength(value: unknown): void {
  const length =
    typeof value === "string" ? Buffer.byteLength(value) : value instanceof Uint8Array ? value.byteLength : 0;
  if (length > SQLITE_LIMITS.valueBytes) throw new Error("string or blob too big: SQLITE_TOOBIG");
}

/** Blobs leave as plain Uint8Array (not Buffer), as the Durable Object adapter hands them. */
function fromSqlite<T extends Row>(raw: unknown): T {
  const row: Row = {};
  for (const [key, value] of Object.entries(raw as Record<string, SqlValue>)) {
    checkLength(value);
    row[key] = value instanceof Uint8Array ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : value;
  }
  return row as T;
}
