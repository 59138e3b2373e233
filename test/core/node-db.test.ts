/**
 * The Node adapter's own bound on one value: the lowest workerd has been
 * measured to enforce (test/core/suites/sql-limits.ts), one byte past it
 * refused as workerd refuses it.
 */
import { describe, expect, it } from "vitest";
import { SQLITE_LIMITS } from "../../worker/sync/db.ts";
import { useHarness } from "./harness.ts";
import { freshWorkspace } from "./helpers.ts";
import { NODE_HARNESS } from "./node-harness.ts";

useHarness(NODE_HARNESS);

describe("the Node Db adapter", () => {
  it("refuses a value one byte over 2,200,000 bytes, a string as a blob", () =>
    freshWorkspace().withDb(({ db }) => {
      const over = SQLITE_LIMITS.valueBytes + 1;
      expect(() => db.exec(`SELECT length(?) AS n`, new Uint8Array(over))).toThrow(
        "string or blob too big: SQLITE_TOOBIG",
      );
      expect(() => db.exec(`SELECT length(?) AS n`, "a".repeat(over))).toThrow("string or blob too big: SQLITE_TOOBIG");
    }));
});
