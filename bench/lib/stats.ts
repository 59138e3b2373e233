/**
 * Samples and summaries, the way BENCHMARKING.md asks: a warm-up that is not
 * recorded, at least five samples, the arms interleaved and their order
 * rotated each round (A B, B A, ...) so that neither always runs on the
 * other's warm caches, and min / median / max rather than a mean.
 */
export interface Summary {
  readonly n: number;
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { n: 0, min: Number.NaN, median: Number.NaN, max: Number.NaN };
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
  return { n: s.length, min: s[0] as number, median, max: s[s.length - 1] as number };
}

/** The p-th percentile (0..100), nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}

export interface Arm<T> {
  readonly name: string;
  /** One sample; `round` is -1 for the warm-up. */
  readonly run: (round: number) => Promise<T>;
}

export interface AlternateOptions {
  readonly samples: number;
  readonly warmup?: number;
  /** Called after each sample, for progress lines. */
  readonly onSample?: (arm: string, round: number, sample: unknown) => void;
}

/**
 * Runs every arm `warmup` times (discarded) then `samples` times, rotating
 * which arm goes first each round. Returns the recorded samples per arm.
 */
export async function runAlternating<T>(arms: readonly Arm<T>[], opts: AlternateOptions): Promise<Map<string, T[]>> {
  const out = new Map<string, T[]>(arms.map((a) => [a.name, []]));
  for (let w = 0; w < (opts.warmup ?? 1); w++) for (const arm of arms) await arm.run(-1);
  for (let round = 0; round < opts.samples; round++) {
    for (let k = 0; k < arms.length; k++) {
      const arm = arms[(round + k) % arms.length] as Arm<T>;
      const sample = await arm.run(round);
      (out.get(arm.name) as T[]).push(sample);
      opts.onSample?.(arm.name, round, sample);
    }
  }
  return out;
}

/** `12.3 ms (min 11.9, max 14.0)` */
export function formatMs(s: Summary): string {
  return `${fmt(s.median)} ms (min ${fmt(s.min)}, max ${fmt(s.max)})`;
}

export function fmt(n: number, digits?: number): string {
  if (!Number.isFinite(n)) return String(n);
  const d = digits ?? (Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2);
  return n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
}

/** Spread as max / min: above ~1.5 the machine was probably busy during the run. */
export function spread(s: Summary): number {
  return s.min > 0 ? s.max / s.min : Number.POSITIVE_INFINITY;
}
