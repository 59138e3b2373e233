/**
 * Garbage collection racing uploads and pushes, seeded, many rounds, with
 * packs in the object's SQLite (the race: gc-race-run.ts; with packs in R2:
 * test/worker/r2/gc-seeded-race.test.ts).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Race, ROUNDS } from "./gc-race-run.ts";

const SEEDS = [1, 2, 3];

afterEach(() => {
  vi.restoreAllMocks();
});

describe("garbage collection racing uploads and pushes", () => {
  it.each(SEEDS)(
    "seed %i: never loses a byte a live file, a kept version or an upload in its grace names",
    async (seed) => {
      const race = new Race(seed);
      for (let r = 0; r < ROUNDS; r++) await race.round();
      // The race ran both ways: pushes committed, some came too late and were refused, garbage went.
      expect(race.tally.committed).toBeGreaterThan(ROUNDS);
      expect(race.tally.refused).toBeGreaterThan(0);
      expect(race.tally.freed).toBeGreaterThan(0);
      expect(race.tally.rewritten).toBeGreaterThan(0);
      console.log(`gc race seed ${seed}: ${JSON.stringify(race.tally)}`);
    },
    180_000,
  );
});
