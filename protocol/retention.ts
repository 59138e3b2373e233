/**
 * The retention settings' names and format (README.md "Retention"): Worker
 * variables whose values are durations. Read by the Worker's collector
 * (worker/sync/retention.ts) and checked by `ferry serve` before it starts
 * (client/cli/serve.ts), so a mistyped `--var` is refused at once rather than
 * found at the next collection.
 */

/** The Worker variables, by field. Each is a duration: seconds, or a number with s, m, h or d. */
export const RETENTION_VARS = {
  historyMs: "FERRY_HISTORY",
  graceMs: "FERRY_UPLOAD_GRACE",
  horizonMs: "FERRY_TOMBSTONE_HORIZON",
  packGraceMs: "FERRY_PACK_GRACE",
} as const;

const SECOND = 1000;
const UNIT_MS = { "": SECOND, s: SECOND, m: 60 * SECOND, h: 3600 * SECOND, d: 86_400 * SECOND } as const;

/** `3600`, `90s`, `15m`, `12h`, `7d`, `0` as milliseconds; null for anything else. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,9})\s*([smhd]?)$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}
