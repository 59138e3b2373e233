/**
 * The host store's SQL, one named statement per thing SqliteStore
 * (sqlite-store.ts) reads or writes, over the tables of schema.ts.
 */
import type Database from "better-sqlite3";
import { PATH_COLUMNS, type PathValues } from "./record.ts";

/** The one row of `host`: the store's own id and positions. */
export interface HostRow {
  host_id: Uint8Array;
  host_rev: number;
  acked_rev: number;
  acked_path: string | null;
  pull_epoch: Uint8Array | null;
  pull_rev: number | null;
  pull_path: string | null;
  pull_rev_id: Uint8Array | null;
  tombstones_pruned: number;
  ignored_left: string | null;
}

export type StoreStatements = ReturnType<typeof storeStatements>;

/**
 * The part of a better-sqlite3 statement the store uses: named here because
 * the package's own type cannot be named in the library's declarations.
 */
export interface Statement<P extends unknown[], R> {
  run(...params: P): Database.RunResult;
  get(...params: P): R | undefined;
  all(...params: P): R[];
  iterate(...params: P): IterableIterator<R>;
  /** Rows as arrays of column values. */
  raw(): Statement<P, R>;
  /** Rows as their first column's value. */
  pluck(): Statement<P, R>;
}

export function storeStatements(db: Database.Database) {
  const sql = <P extends unknown[], R = unknown>(text: string): Statement<P, R> => db.prepare<P, R>(text);
  return preparedOnUse({
    host: () => sql<[], HostRow>("SELECT * FROM host WHERE id = 1"),
    setHostRev: () => sql<[number]>("UPDATE host SET host_rev = ? WHERE id = 1"),
    setAcked: () => sql<[number, string | null]>("UPDATE host SET acked_rev = ?, acked_path = ? WHERE id = 1"),
    setPull: () =>
      sql<[Uint8Array | null, number | null, string | null, Uint8Array | null]>(
        "UPDATE host SET pull_epoch = ?, pull_rev = ?, pull_path = ?, pull_rev_id = ? WHERE id = 1",
      ),
    get: () => sql<[string], PathValues>(`SELECT ${PATH_COLUMNS} FROM paths WHERE path = ?`).raw(),
    all: () => sql<[], PathValues>(`SELECT ${PATH_COLUMNS} FROM paths ORDER BY path`).raw(),
    // One string per row, `path NUL flag [= stat]`: flag `g` for a tombstone, `k` for any other
    // kind; no `=` when the stat is null. NUL is in no path. In path order: the scanner merges the
    // rows with its walk (known-paths.ts).
    fingerprints: () =>
      sql<[], string>(
        // The rows of fingerprint-rows.ts, in the primary key's order.
        "SELECT path || char(0) || iif(kind = 'gone', 'g', 'k') || coalesce('=' || stat, '') FROM paths ORDER BY path",
      ).pluck(),
    keptRows: () => sql<[], string | null>("SELECT rows FROM scan_rows WHERE id = 1").pluck(),
    markRowsRead: () => sql<[]>("INSERT OR REPLACE INTO scan_rows (id, rows) VALUES (1, NULL)"),
    keepRows: () => sql<[string]>("UPDATE scan_rows SET rows = ? WHERE id = 1 AND rows IS NULL"),
    under: () =>
      sql<[string, string], PathValues>(
        `SELECT ${PATH_COLUMNS} FROM paths WHERE path >= ? AND path < ? ORDER BY path`,
      ).raw(),
    pending: () =>
      sql<[number, number], PathValues>(
        // `host_rev > 0` lets the partial index paths_by_host_rev serve it: a restore reads no rows.
        `SELECT ${PATH_COLUMNS} FROM paths WHERE host_rev > ? AND host_rev > 0 ORDER BY host_rev LIMIT ?`,
      ).raw(),
    pendingCount: () =>
      sql<[number], { n: number }>("SELECT count(*) AS n FROM paths WHERE host_rev > ? AND host_rev > 0"),
    pendingDeletions: () =>
      sql<[number], { n: number }>(
        "SELECT count(*) AS n FROM paths WHERE host_rev > ? AND host_rev > 0 AND kind = 'gone' AND server_rev > 0",
      ),
    livePaths: () => sql<[], { n: number }>("SELECT count(*) AS n FROM paths WHERE kind != 'gone'"),
    put: () =>
      sql<PathValues>(`INSERT OR REPLACE INTO paths (${PATH_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    remove: () => sql<[string]>("DELETE FROM paths WHERE path = ?"),
    markAgreed: () => sql<[number, Uint8Array, string]>("UPDATE paths SET server_rev = ?, agreed = ? WHERE path = ?"),
    deferred: () =>
      sql<[], { change: Uint8Array; reason: string }>("SELECT change, reason FROM deferred ORDER BY path"),
    defer: () =>
      sql<[string, Uint8Array, string]>("INSERT OR REPLACE INTO deferred (path, change, reason) VALUES (?, ?, ?)"),
    undefer: () => sql<[string]>("DELETE FROM deferred WHERE path = ?"),
    putSource: () => sql<[Uint8Array, string]>("INSERT OR REPLACE INTO chunk_sources (hash, path) VALUES (?, ?)"),
    source: () => sql<[Uint8Array], { path: string }>("SELECT path FROM chunk_sources WHERE hash = ?"),
    anySource: () => sql<[], { one: number }>("SELECT 1 AS one FROM chunk_sources LIMIT 1"),
    journal: () =>
      sql<[string, number, Uint8Array]>("INSERT OR REPLACE INTO pulling (path, rev, signature) VALUES (?, ?, ?)"),
    journalRows: () =>
      sql<[], { path: string; rev: number; signature: Uint8Array }>(
        "SELECT path, rev, signature FROM pulling ORDER BY path",
      ),
    clearJournal: () => sql<[]>("DELETE FROM pulling"),
    pruneTombstones: () =>
      sql<[number]>(
        "DELETE FROM paths WHERE kind = 'gone' AND server_rev <= ? AND host_rev <= (SELECT acked_rev FROM host WHERE id = 1)",
      ),
    setPruned: () => sql<[number]>("UPDATE host SET tombstones_pruned = ? WHERE id = 1"),
    setIgnoredLeft: () => sql<[string | null]>("UPDATE host SET ignored_left = ? WHERE id = 1"),
  });
}

/**
 * The store's statements, each prepared the first time it is used: a
 * command uses a few of the 30, and preparing all of them at open cost
 * every command ~1 ms of CPU (BENCHMARKS.md section 16).
 * better-sqlite3 prepares while an iterator is open, so no use can fail
 * where an eager prepare would not.
 */
function preparedOnUse<T extends Record<string, () => unknown>>(
  make: T,
): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const made: Record<string, unknown> = {};
  const statements = {};
  for (const [key, prepare] of Object.entries(make)) {
    Object.defineProperty(statements, key, { get: () => (made[key] ??= prepare()) });
  }
  return statements as { readonly [K in keyof T]: ReturnType<T[K]> };
}
