/**
 * A request that is out while the scan runs (hello, in a sync and in a
 * look): scan-stamp.ts and status.ts scan while it is answered instead of
 * waiting for it first.
 */

import { nowMs } from "../common/clock.ts";

/** While hello is out, the scan gives the event loop a turn at least this often, so the answer is read when it lands. */
const TURN_MS = 4;

export interface Answering<T> {
  /** The answer, once it is in. */
  answer(): T | null;
  /**
   * For Scanner.scanPausing: a turn of the event loop every TURN_MS until
   * the answer is in (so it is read when it lands, not after the scan);
   * throws the request's error once it failed, which ends the scan early.
   */
  turn(): Promise<void> | null;
}

export function whileAnswering<T>(pending: Promise<T>): Answering<T> {
  const state: { answer?: T; failure?: { readonly error: unknown } } = {};
  pending.then(
    (value) => {
      state.answer = value;
    },
    (error: unknown) => {
      state.failure = { error };
    },
  );
  let turned = nowMs();
  return {
    answer: () => state.answer ?? null,
    turn: () => {
      if (state.failure) throw state.failure.error;
      if (state.answer !== undefined || nowMs() - turned < TURN_MS) return null;
      turned = nowMs();
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
}
