/**
 * The measurement behind worker/sync/hash-list.ts: three ways to probe
 * 100,000 hashes against Durable Object SQLite, all correct, compared by
 * statements (asserted) and time (logged; timing is not asserted). The blob
 * with a recursive CTE is what `has`, `objects/get` and push's missing-object
 * check use. Since protocol version 2 a request's hashes arrive already
 * concatenated, so the blob strategies start from the list as `has` gets it,
 * while the others start from one array item per hash as they would need.
 * Two blob strategies: the one before (SQL sorts, a row per held hash) and
 * the one used (sorted in JS, one row per window; hash-list.ts).
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { joinHashes } from "../../protocol/hash.ts";
import { freshWorkspace, ok } from "../../test/worker/helpers.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { type Db, MAX_PARAMS } from "../../worker/sync/db.ts";
import { hashWindows, probeHashList, SORTED_CTE } from "../../worker/sync/hash-list.ts";

const COUNT = 100_000;
/** Hashes per JSON parameter: 67 bytes of hex each, under the ~2 MB value bound. */
const JSON_HASHES = 28_000;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
/** Table-driven hex, so the JSON strategy is not charged for a slow encoder. */
function fastHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += HEX[b];
  return s;
}

function probeInWindows(db: Db, hashes: readonly Uint8Array[]): boolean[] {
  const held = new Set<string>();
  for (let i = 0; i < hashes.length; i += MAX_PARAMS) {
    const window = hashes.slice(i, i + MAX_PARAMS);
    const sql = `SELECT hash FROM objects WHERE hash IN (${window.map(() => "?").join(", ")})`;
    for (const row of db.exec<{ hash: Uint8Array }>(sql, ...window).rows) held.add(fastHex(row.hash));
  }
  return hashes.map((h) => held.has(fastHex(h)));
}

function probeWithJson(db: Db, hashes: readonly Uint8Array[]): boolean[] {
  const have = hashes.map(() => false);
  for (let i = 0; i < hashes.length; i += JSON_HASHES) {
    const json = JSON.stringify(hashes.slice(i, i + JSON_HASHES).map(fastHex));
    const { rows } = db.exec<{ i: number }>(
      `SELECT j.key AS i FROM json_each(?) j CROSS JOIN objects o ON o.hash = unhex(j.value)`,
      json,
    );
    for (const row of rows) have[i + row.i] = true;
  }
  return have;
}

function probeSortedInSql(db: Db, list: Uint8Array): Uint8Array {
  const have = new Uint8Array(list.byteLength / 32);
  for (const w of hashWindows(list)) {
    const sql = `${SORTED_CTE} SELECT w.i AS i FROM sorted w CROSS JOIN objects o ON o.hash = w.hash`;
    for (const row of db.exec<{ i: number }>(sql, w.blob, w.count).rows) have[w.offset + row.i] = 1;
  }
  return have;
}

describe("has strategies", () => {
  it("answer 100,000 hashes alike, the blob in the fewest statements", async () => {
    const ws = freshWorkspace();
    const objects = await Promise.all(
      Array.from({ length: 2000 }, async (_, i) => {
        const bytes = new TextEncoder().encode(`object ${i}`);
        return { hash: new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), bytes };
      }),
    );
    await ok(ws, "putObjects", { objects });
    const hashes = Array.from({ length: COUNT }, (_, i) =>
      i % 50 === 0 ? (objects[i / 50]?.hash as Uint8Array) : crypto.getRandomValues(new Uint8Array(32)),
    );

    const list = joinHashes(hashes);

    const results = await runInDurableObject(ws, (instance: WorkspaceObject) => {
      const measure = (name: string, probe: (db: Db) => ArrayLike<boolean | number>) => {
        const before = { ...instance.db.meter };
        const started = performance.now();
        const answer = probe(instance.db);
        const ms = performance.now() - started;
        const statements = instance.db.meter.statements - before.statements;
        console.log(`${name}: ${statements} statements, ${ms.toFixed(0)} ms`);
        return { have: Array.from(answer, (b) => b === true || b === 1), statements };
      };
      return {
        windows: measure("windows of 100 parameters", (db) => probeInWindows(db, hashes)),
        json: measure("JSON parameter (json_each + unhex)", (db) => probeWithJson(db, hashes)),
        sqlSorted: measure("blob + CTE, ORDER BY in SQL, a row per held hash", (db) => probeSortedInSql(db, list)),
        blob: measure("blob + CTE, sorted in JS, one row per window", (db) => probeHashList(db, list)),
      };
    });

    const expected = hashes.map((_, i) => i % 50 === 0);
    expect(results.windows.have).toEqual(expected);
    expect(results.json.have).toEqual(expected);
    expect(results.sqlSorted.have).toEqual(expected);
    expect(results.blob.have).toEqual(expected);
    expect(results.windows.statements).toBe(1000);
    expect(results.json.statements).toBe(4);
    expect(results.sqlSorted.statements).toBe(2);
    expect(results.blob.statements).toBe(2);
  });
});
