/**
 * `npm run bench`: every benchmark at small sizes, a few minutes in all, each
 * in its own process as `npm run bench:<name> -- --quick` would run it.
 * Results go to bench/results/<name>-quick.json so the full runs that
 * BENCHMARKS.md publishes are never overwritten by a quick one.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { BENCH_DIR, REPO_DIR } from "./lib/results.ts";

const STEPS: readonly (readonly [string, readonly string[]])[] = [
  ["start", ["--quick"]],
  ["rows", ["--quick"]],
  ["probe", ["--quick"]],
  ["restore", ["--quick"]],
  ["push", ["--quick"]],
  ["live", ["--quick"]],
  ["serve", ["--quick"]],
];

const failed: string[] = [];
const t0 = performance.now();
for (const [name, args] of STEPS) {
  process.stderr.write(`\n=== bench:${name} ${args.join(" ")}\n`);
  const run = spawnSync(process.execPath, ["--import", "tsx", join(BENCH_DIR, `${name}.ts`), ...args], {
    cwd: REPO_DIR,
    stdio: "inherit",
  });
  if (run.status !== 0) failed.push(name);
}
process.stderr.write(
  `\nnpm run bench: ${STEPS.length - failed.length}/${STEPS.length} benchmarks ran in ${((performance.now() - t0) / 1000).toFixed(0)} s` +
    `${failed.length > 0 ? `; failed: ${failed.join(", ")}` : ""}. Results: bench/results/*-quick.{json,md}\n`,
);
if (failed.length > 0) process.exitCode = 1;
