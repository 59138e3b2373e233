/**
 * What the pull's `futimes` argument costs (BENCHMARKS.md section 18): a
 * time in seconds handed as a numeric string, made twice (atime and mtime)
 * and parsed back by Node, against the number itself, made once. 34,000
 * calls (the npm tree's files) on one descriptor, CPU ms, alternated.
 *
 *   npx tsx bench/micro/utimes-arg.ts [rounds, default 6]
 */
import { closeSync, futimesSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CALLS = 34_000;
const BASE_MS = 1_764_662_400_123;
const rounds = Number(process.argv[2] ?? 6);
const dir = mkdtempSync(join(tmpdir(), "utimes-arg-"));
const fd = openSync(join(dir, "f"), "w");

const arms = {
  "string, twice": (ms: number) => futimesSync(fd, String((ms + 0.5) / 1000), String((ms + 0.5) / 1000)),
  "number, once": (ms: number) => {
    const seconds = (ms + 0.5) / 1000;
    futimesSync(fd, seconds, seconds);
  },
};
const times = new Map<string, number[]>(Object.keys(arms).map((name) => [name, []]));
for (let r = 0; r < rounds; r++) {
  for (const [name, call] of r % 2 === 0 ? Object.entries(arms) : Object.entries(arms).reverse()) {
    const start = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) call(BASE_MS + i);
    const used = process.cpuUsage(start);
    times.get(name)?.push((used.user + used.system) / 1000);
  }
}
closeSync(fd);
rmSync(dir, { recursive: true });
for (const [name, ms] of times) {
  const sorted = [...ms].sort((a, b) => a - b);
  process.stdout.write(
    `${name}: median ${(sorted[sorted.length >> 1] ?? 0).toFixed(1)} CPU ms (${ms.map((m) => m.toFixed(0)).join(" ")})\n`,
  );
}
