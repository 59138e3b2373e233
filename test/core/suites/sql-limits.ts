/**
 * The Db port refuses what Durable Object SQLite refuses, alike on both
 * adapters (test/core/node-db.ts checks in JavaScript what workerd's SQLite
 * checks itself), so a statement the sync core could not run in the object
 * fails in Node too.
 */
import { describe, expect, it } from "vitest";
import { SQLITE_LIMITS } from "../../../worker/sync/db.ts";
import { freshWorkspace } from "../helpers.ts";

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(",");
const ones = (n: number) => Array.from({ length: n }, () => 1);
/** A SELECT padded by a comment to exactly `bytes` bytes of SQL. */
const statementOf = (bytes: number) => `SELECT 1 AS s -- ${"x".repeat(bytes - 17)}`;

export function sqlLimitsSuite(): void {
  describe("the Db port's limits", () => {
    it("binds 100 parameters and refuses 101 as too many SQL variables", () =>
      freshWorkspace().withDb(({ db }) => {
        const max = SQLITE_LIMITS.params;
        expect(db.exec(`SELECT 1 AS s WHERE 1 IN (${placeholders(max)})`, ...ones(max)).rows).toEqual([{ s: 1 }]);
        expect(() => db.exec(`SELECT 1 AS s WHERE 1 IN (${placeholders(max + 1)})`, ...ones(max + 1))).toThrow(
          /^too many SQL variables/,
        );
        expect(() => db.exec(`SELECT ?101 AS s`, ...ones(101))).toThrow(/too many SQL variables|between \?1 and \?100/);
      }));

    it("runs a statement of 100,000 bytes and refuses one of 100,001 as too long", () =>
      freshWorkspace().withDb(({ db }) => {
        expect(statementOf(SQLITE_LIMITS.statementBytes)).toHaveLength(100_000);
        expect(db.exec(statementOf(SQLITE_LIMITS.statementBytes)).rows).toEqual([{ s: 1 }]);
        expect(() => db.exec(statementOf(SQLITE_LIMITS.statementBytes + 1))).toThrow(
          "statement too long: SQLITE_TOOBIG",
        );
      }));

    // workerd's bound on one value moved between releases: 2,200,000 bytes in 1.20260815, 8,388,642 in
    // 1.20261102 (measured by bisection). The Node adapter refuses past the lowest, so a statement that runs
    // in Node runs in either; test/core/node-db.test.ts checks its exact bound.
    it("binds and returns a value of 2,200,000 bytes and refuses one of 16 MiB as too big", () =>
      freshWorkspace().withDb(({ db }) => {
        const max = SQLITE_LIMITS.valueBytes;
        const over = 16 * 1024 * 1024;
        expect(db.exec<{ n: number }>(`SELECT length(?) AS n`, new Uint8Array(max)).rows).toEqual([{ n: max }]);
        expect(() => db.exec(`SELECT length(?) AS n`, new Uint8Array(over))).toThrow(
          "string or blob too big: SQLITE_TOOBIG",
        );
        expect(() => db.exec(`SELECT length(?) AS n`, "a".repeat(over))).toThrow(
          "string or blob too big: SQLITE_TOOBIG",
        );
      }));

    it("refuses a statement given more or fewer values than it has parameters", () =>
      freshWorkspace().withDb(({ db }) => {
        expect(() => db.exec(`SELECT ? AS s`, 1, 2)).toThrow("Wrong number of parameter bindings for SQL query.");
        expect(() => db.exec(`SELECT ?, ? AS s`, 1)).toThrow("Wrong number of parameter bindings for SQL query.");
      }));

    it("binds a numbered parameter once for every place that reads it", () =>
      freshWorkspace().withDb(({ db }) => {
        expect(db.exec(`SELECT ?1 AS a, ?2 AS b, ?1 || '?' AS c`, "x", "y").rows).toEqual([
          { a: "x", b: "y", c: "x?" },
        ]);
      }));

    it("refuses SQL transaction statements: transactions go through the port", () =>
      freshWorkspace().withDb(({ db }) => {
        expect(() => db.exec(`BEGIN`)).toThrow(/use the state.storage.transaction\(\)/);
        expect(() => db.exec(`SAVEPOINT s`)).toThrow(/use the state.storage.transaction\(\)/);
      }));

    it("binds numbers as REAL and returns blobs as Uint8Array", () =>
      freshWorkspace().withDb(({ db }) => {
        const [row] = db.exec(`SELECT typeof(?) AS t, ? / 2 AS half, x'0102' AS b`, 3, 3).rows;
        expect(row).toEqual({ t: "real", half: 1.5, b: new Uint8Array([1, 2]) });
        expect(Object.getPrototypeOf(row?.b)).toBe(Uint8Array.prototype);
      }));

    it("rolls back every write of a transaction that throws", () =>
      freshWorkspace().withDb(({ db }) => {
        db.exec(`CREATE TABLE t (k INTEGER PRIMARY KEY)`);
        expect(() =>
          db.transaction(() => {
            db.exec(`INSERT INTO t (k) VALUES (1)`);
            throw new Error("abandon");
          }),
        ).toThrow("abandon");
        expect(db.exec(`SELECT count(*) AS n FROM t`).rows).toEqual([{ n: 0 }]);
      }));
  });
}
