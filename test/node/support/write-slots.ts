import { afterEach, beforeEach } from "vitest";

/** The pull's write slots a suite runs with (client/engine/write-slots.ts): the synchronous path, and slots. */
export const WRITE_SLOT_SETTINGS = [0, 4] as const;

/** Runs the enclosing suite's tests with FERRY_WRITE_SLOTS=n, restored after each. */
export function useWriteSlots(n: number): void {
  let before: string | undefined;
  beforeEach(() => {
    before = process.env.FERRY_WRITE_SLOTS;
    process.env.FERRY_WRITE_SLOTS = String(n);
  });
  afterEach(() => {
    if (before === undefined) delete process.env.FERRY_WRITE_SLOTS;
    else process.env.FERRY_WRITE_SLOTS = before;
  });
}
