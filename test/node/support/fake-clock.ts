/**
 * A clock the test moves, with vitest's fake timers: for the front door's
 * parts that read the time and set timers (held answers, turns).
 */
import { afterEach, beforeEach, vi } from "vitest";

/** Fake timers for each test of the calling file, and a clock at 0 for each: `now` reads it, `pass` moves both. */
export function fakeClock(): { now: () => number; pass: (ms: number) => void } {
  let clock = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    clock = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  return {
    now: () => clock,
    pass(ms) {
      clock += ms;
      vi.advanceTimersByTime(ms);
    },
  };
}
