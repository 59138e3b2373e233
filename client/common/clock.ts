/**
 * Milliseconds from an arbitrary start, for measuring intervals: what
 * `performance.now()` gives, without it. Node loads perf_hooks and its
 * timing modules on the first touch of the `performance` global (~2 ms of
 * CPU), which every `ferry sync` paid for its report's `ms` alone
 * (BENCHMARKS.md section 15). From `process.hrtime()`, not
 * `hrtime.bigint()`: the pull calls it once per entry, and needs no BigInt.
 */
export function nowMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}
