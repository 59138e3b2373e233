/**
 * Milliseconds from an arbitrary start, for measuring intervals: what
 * `performance.now()` gives, without it. Node loads perf_hooks and its
 * timing modules on the first touch of the `performance` global (~2 ms of
 * CPU), which every `ferry sync` paid for its report's `ms` alone
 * (BENCHMARKS.md section 15).
 */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
