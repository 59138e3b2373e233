/**
 * The measurement behind worker/sync/gc/usage.ts (`/stats`' storage
 * figures): the walk in JavaScript it replaced (test/core/usage-walk.ts)
 * against the SQL that classes objects, side by side in one Durable Object,
 * arms alternated, at 1,000 and 100,000 files. Two shapes: every file its
 * own object, and every file one shared object (bench:page's workspace).
 * Answers asserted equal; times logged, not asserted.
 *
 *   npx vitest run --config vitest.bench.config.ts bench/sqlite/usage-timing.test.ts
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { StorageUsage } from "../../protocol/stats.ts";
import { walkedFigures, walkUsage } from "../../test/core/usage-walk.ts";
import { freshWorkspace } from "../../test/worker/helpers.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { readUsage } from "../../worker/sync/gc/usage.ts";

const SAMPLES = 5;

function fill(db: WorkspaceObject["db"], files: number, shared: boolean): void {
  const hash = shared ? `unhex(printf('%064x', 0))` : `unhex(printf('%064x', i))`;
  db.exec(
    `WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
     INSERT OR IGNORE INTO objects (hash, pack, offset, size, bytes, at) SELECT ${hash}, NULL, 0, 10, zeroblob(10), 0 FROM n`,
    files,
  );
  db.exec(
    `WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
     INSERT INTO entries (path, rev, kind, mode, mtime, size, chunks, target, origin)
     SELECT 'node_modules/p' || (i / 9) || '/f' || (i % 9), 1, 'file', 420, 0, 10, ${hash}, NULL, zeroblob(16) FROM n`,
    files,
  );
  // A version for one path in ten, naming its file's object and one of its own.
  db.exec(
    `WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 10 FROM n WHERE i < ? - 10)
     INSERT INTO versions (path, rev, until_rev, kind, mode, mtime, size, chunks, target, origin)
     SELECT 'node_modules/p' || (i / 9) || '/f' || (i % 9), 0, 1, 'file', 420, 0, 20,
       ${hash} || unhex(printf('%064x', i + 1)), NULL, zeroblob(16) FROM n`,
    files,
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const fmt = (xs: number[]) =>
  `${median(xs).toFixed(1)} ms (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`;

describe("storage usage: a JavaScript walk against SQL", () => {
  for (const shared of [false, true])
    for (const files of [1000, 100_000]) {
      it(`${files} files, ${shared ? "one shared object" : "an object each"}`, { timeout: 600_000 }, async () => {
        const ws = freshWorkspace();
        await runInDurableObject(ws, (instance: WorkspaceObject) => {
          fill(instance.db, files, shared);
          const ctx = { db: instance.db, now: Date.now };
          const walk: number[] = [];
          const sql: number[] = [];
          for (let s = 0; s <= SAMPLES; s++) {
            for (const arm of s % 2 === 0 ? ["walk", "sql"] : ["sql", "walk"]) {
              const t = performance.now();
              const got = arm === "walk" ? walkUsage(ctx.db) : readUsage(ctx, null);
              const ms = performance.now() - t;
              if (s > 0) (arm === "walk" ? walk : sql).push(ms);
              if (arm === "sql") expect(walkedFigures(got as StorageUsage)).toEqual(walkUsage(ctx.db));
            }
          }
          console.log(
            `usage, ${files} files, ${shared ? "shared" : "distinct"}: walk ${fmt(walk)}, sql ${fmt(sql)}, ratio ${median(sql) > 0 ? `${(median(walk) / median(sql)).toFixed(2)}x` : "past the 1 ms clock"}`,
          );
        });
      });
    }
});
