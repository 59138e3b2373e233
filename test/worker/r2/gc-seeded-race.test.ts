/**
 * Garbage collection racing uploads and pushes, seeded, many rounds, with
 * packs in R2 (the race: ../gc-race-run.ts): packs condemned, revived,
 * rewritten and deleted from the bucket while hosts upload and push, and
 * no byte anything retained names is ever gone.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Race, ROUNDS } from "../gc-race-run.ts";

const SEEDS = [1, 2, 3];

afterEach(() => {
  vi.restoreAllMocks();
});

describe("garbage collection with packs in R2, racing uploads and pushes", () => {
  it.each(SEEDS)(
    "seed %i: never loses a byte a live file, a kept version or an upload in its grace names",
    async (seed) => {
      const race = new Race(seed);
      for (let r = 0; r < ROUNDS; r++) await race.round();
      // Both phases ran: packs were condemned, and deleted from the bucket once their grace was over.
      expect(race.tally.committed).toBeGreaterThan(ROUNDS);
      expect(race.tally.refused).toBeGreaterThan(0);
      expect(race.tally.condemned).toBeGreaterThan(0);
      expect(race.tally.r2Deleted).toBeGreaterThan(0);
      console.log(`gc race in R2, seed ${seed}: ${JSON.stringify(race.tally)}`);
    },
    180_000,
  );
});
