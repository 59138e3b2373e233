/**
 * Bytes counted in a budget (inflight.ts) for as long as something keeps
 * renewing them, given back when it ends or when it stops renewing: an HTTP
 * answer's room (answer-room.ts), held while its reader takes its pieces.
 * The runtime drops a request's pending continuations when its client
 * disconnects, so the code that would end the lease may never run; a
 * lease not renewed for its term lapses the next time any budget looks
 * (InflightBudget's fits), whichever object's request looks.
 */

/** What a lease gives its bytes back to. */
interface Releases {
  release(bytes: number): void;
}

export interface Lease {
  /** Holds the bytes for another term from now. */
  renew(): void;
  /** Gives the bytes back, once. */
  end(): void;
}

interface Held {
  readonly budget: Releases;
  readonly bytes: number;
  readonly termMs: number;
  until: number;
}

const held = new Set<Held>();

/** A lease on `bytes` already counted in `budget`, for `termMs` at a time. */
export function leaseHeld(budget: Releases, bytes: number, termMs: number): Lease {
  const lease: Held = { budget, bytes, termMs, until: Date.now() + termMs };
  held.add(lease);
  return {
    renew: () => {
      lease.until = Date.now() + lease.termMs;
    },
    end: () => {
      if (held.delete(lease)) budget.release(bytes);
    },
  };
}

/** Gives back the bytes of every lease past its term. */
export function lapseLeases(now = Date.now()): void {
  for (const lease of held) {
    if (lease.until > now) continue;
    held.delete(lease);
    lease.budget.release(lease.bytes);
  }
}
