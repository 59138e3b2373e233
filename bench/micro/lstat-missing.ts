/**
 * What an lstat of a missing path costs with Node's ENOENT exception and
 * without it (`throwIfNoEntry: false`), in CPU µs per call: 30,000 paths,
 * three alternated rounds (BENCHMARKS.md section 11; client/engine/disk.ts
 * lstatOrNull).
 *
 *   npx tsx bench/micro/lstat-missing.ts
 */
import { lstatSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const N = 30_000;
const paths = Array.from({ length: N }, (_, i) => join(tmpdir(), "ferry-no-such-dir", `x${i}`));

const ways: Record<string, (p: string) => unknown> = {
  exception: (p) => {
    try {
      return lstatSync(p, { bigint: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
  },
  "throwIfNoEntry: false": (p) => lstatSync(p, { bigint: true, throwIfNoEntry: false }) ?? null,
};

for (let round = 0; round < 3; round++) {
  for (const [name, lstat] of Object.entries(ways)) {
    const before = process.cpuUsage();
    for (const p of paths) lstat(p);
    const used = process.cpuUsage(before);
    console.log(`${name}: ${((used.user + used.system) / N).toFixed(2)} µs of CPU per missing path`);
  }
}
