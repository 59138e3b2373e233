/**
 * A first pull's path rows and chunk sources, written as the host store
 * writes them (BENCHMARKS.md section 18): 35,000 rows in transactions of
 * 5,000, one row a statement, or K rows a statement (multi-row VALUES),
 * against the store's schema in WAL on disk. CPU ms per arm, arms alternated.
 *
 *   npx tsx bench/micro/store-rows.ts [rounds, default 3]
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

const ROWS = 35_000;
const PAGE = 5_000;
const PER_STATEMENT = [1, 8, 40];
const rounds = Number(process.argv[2] ?? 3);

const pool = randomBytes(32 * 2 * ROWS);
const rows = Array.from({ length: ROWS }, (_, i) => [
  `node_modules/pkg-${Math.floor(i / 8)}/lib/some/file-${i}.js`,
  "file",
  0o644,
  1_700_000_000_000,
  1234,
  pool.subarray(64 * i, 64 * i + 32),
  Buffer.from([1, 2, 3]),
  null,
  `f1234:1700000000000500000:${1_000_000 + i}:33188:1764662400123456789`,
  0,
  1,
  pool.subarray(64 * i + 32, 64 * i + 64),
]);

function run(k: number): number {
  const dir = mkdtempSync(join(tmpdir(), "store-rows-"));
  const db = new Database(join(dir, "s.db"));
  db.pragma("locking_mode = EXCLUSIVE");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`CREATE TABLE paths (path TEXT PRIMARY KEY, kind TEXT NOT NULL, mode INTEGER NOT NULL,
    mtime INTEGER NOT NULL, size INTEGER NOT NULL, chunks BLOB, sizes BLOB, target TEXT, stat TEXT,
    host_rev INTEGER NOT NULL, server_rev INTEGER NOT NULL, agreed BLOB);
    CREATE INDEX paths_by_host_rev ON paths (host_rev) WHERE host_rev > 0;
    CREATE TABLE chunk_sources (hash BLOB PRIMARY KEY, path TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE scan_rows (id INTEGER PRIMARY KEY CHECK (id = 1), rows TEXT);
    CREATE TRIGGER scan_rows_after_insert AFTER INSERT ON paths BEGIN DELETE FROM scan_rows; END;`);
  const paths = db.prepare(`INSERT OR REPLACE INTO paths VALUES ${Array(k).fill(`(${Array(12).fill("?")})`)}`);
  const sources = db.prepare(`INSERT OR REPLACE INTO chunk_sources VALUES ${Array(k).fill("(?, ?)")}`);
  const start = process.cpuUsage();
  for (let p = 0; p < ROWS; p += PAGE) {
    db.transaction(() => {
      for (let i = p; i < p + PAGE; i += k) {
        const group = rows.slice(i, i + k);
        paths.run(group.flat());
        sources.run(group.flatMap((r) => [r[5], r[0]]));
      }
    })();
  }
  const used = process.cpuUsage(start);
  db.close();
  rmSync(dir, { recursive: true });
  return (used.user + used.system) / 1000;
}

const times = new Map<number, number[]>(PER_STATEMENT.map((k) => [k, []]));
for (let r = 0; r < rounds; r++) {
  for (const k of r % 2 === 0 ? PER_STATEMENT : [...PER_STATEMENT].reverse()) times.get(k)?.push(run(k));
}
for (const [k, ms] of times) {
  process.stdout.write(`${k} row(s) a statement: ${ms.map((m) => m.toFixed(0)).join(" / ")} CPU ms\n`);
}
