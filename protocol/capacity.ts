/**
 * The workspace object's storage cap (README.md "Storage cap", PROTOCOL.md
 * §7.9): a Worker variable whose value is a byte size. Read by the object
 * (worker/sync/capacity.ts) and checked by `ferry serve` before it starts.
 */

/** The Worker variable. A byte count, or a number with KB, MB, GB (powers of 1000) or KiB, MiB, GiB (of 1024). */
export const STORAGE_CAP_VAR = "FERRY_STORAGE_CAP";

/**
 * A Durable Object's SQLite holds 10 GB (writes past it fail with
 * SQLITE_FULL). The cap refuses new object bytes only, so 0.5 GB is left
 * for what it never refuses: entries, history and index rows, and a push
 * that deletes (the way out of a full workspace).
 */
export const DEFAULT_STORAGE_CAP = 9_500_000_000;

const UNIT_BYTES: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** `67108864`, `64MiB`, `9.5GB` as bytes (whole); null for anything else. */
export function parseByteSize(text: string): number | null {
  const m = /^(\d{1,15}(?:\.\d{1,6})?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? UNIT_BYTES[(m[2] as string).toLowerCase()] : undefined;
  if (!m || unit === undefined) return null;
  const bytes = Math.floor(Number(m[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : null;
}
