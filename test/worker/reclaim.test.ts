/**
 * The process collects garbage once requests have let go of
 * RECLAIM_AFTER_BYTES since the last collection, before it takes in the
 * next one (worker/do/reclaim.ts), where the runtime exposes `gc` (`ferry
 * serve`'s workerd); where it does not (Cloudflare, this pool), nothing is
 * collected and nothing fails. test/node/serve-memory.test.ts measures
 * what it buys under `ferry serve`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InflightBudget } from "../../worker/do/inflight.ts";
import { letGoOf, RECLAIM_AFTER_BYTES, reclaimIfDue } from "../../worker/do/reclaim.ts";

const runtime = globalThis as { gc?: unknown };
beforeEach(() => {
  // The count is the process's (module state): start each case from a collection.
  runtime.gc = () => {};
  letGoOf(RECLAIM_AFTER_BYTES);
  reclaimIfDue();
});
afterEach(() => {
  delete runtime.gc;
});

function counting(): { collections: number } {
  const seen = { collections: 0 };
  runtime.gc = () => {
    seen.collections++;
  };
  return seen;
}

describe("collection paced by the bytes requests let go of", () => {
  it("collects before the next request once enough was let go of, and only then", () => {
    const seen = counting();
    const budget = new InflightBudget(RECLAIM_AFTER_BYTES * 4);
    const half = RECLAIM_AFTER_BYTES / 2;
    expect(budget.reserve(half)).toBeNull();
    budget.release(half);
    expect(budget.reserve(half)).toBeNull();
    expect(seen.collections, "half let go of: not yet").toBe(0);
    budget.release(half);
    expect(seen.collections, "let go of, but nothing taken in since").toBe(0);
    expect(budget.reserve(1)).toBeNull();
    expect(seen.collections, "the next request").toBe(1);
    budget.release(1);
    expect(budget.reserve(1)).toBeNull();
    expect(seen.collections, "the count starts again").toBe(1);
  });

  it("counts what is let go of outside a budget's release (answers sent, answer-credit.ts)", () => {
    const seen = counting();
    const budget = new InflightBudget(RECLAIM_AFTER_BYTES * 4);
    letGoOf(RECLAIM_AFTER_BYTES);
    expect(seen.collections).toBe(0);
    expect(budget.reserve(1)).toBeNull();
    expect(seen.collections).toBe(1);
  });

  it("does nothing where the runtime has no gc", () => {
    const budget = new InflightBudget(RECLAIM_AFTER_BYTES * 4);
    budget.add(RECLAIM_AFTER_BYTES * 2);
    expect(budget.reserve(1)).toBeNull();
    budget.release(RECLAIM_AFTER_BYTES * 2 + 1);
    expect(budget.reserve(1)).toBeNull();
  });

  it("leaves a budget that counts against another to the root: one collection, not one per level", () => {
    const seen = counting();
    const root = new InflightBudget(RECLAIM_AFTER_BYTES * 4);
    const workspace = new InflightBudget(RECLAIM_AFTER_BYTES * 4, root);
    expect(workspace.reserve(RECLAIM_AFTER_BYTES)).toBeNull();
    workspace.release(RECLAIM_AFTER_BYTES);
    expect(workspace.reserve(1)).toBeNull();
    expect(seen.collections).toBe(1);
  });
});
