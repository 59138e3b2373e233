/** Exponential backoff with full jitter, for the transports' retries. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  readonly baseMs: number;
  readonly capMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 100, capMs: 5000 };

/** The wait before retry number `retry` (0 for the first retry): uniform in [0, min(cap, base * 2^retry)]. */
export function backoffMs(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(policy.capMs, policy.baseMs * 2 ** retry));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
