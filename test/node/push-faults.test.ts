/**
 * A first push whose calls fail at seeded random moments, while the early
 * upload's batches are still answered and the pack is read and sent: a call
 * refused before the server saw it, or its answer lost after the server did
 * the work; as a 5xx, a 413 or a dropped connection. Each failed sync
 * throws (never an unhandled rejection, never a hang) and the next one
 * resumes. Once one ends: a new host pulls exactly the tree, nothing is
 * referenced that the server lacks (every file's bytes come back), and a
 * further sync sends nothing. Seeded: the seed is in every failure message.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ProtocolError } from "../../protocol/errors.ts";
import type { OpName } from "../../protocol/ops.ts";
import { cleanup, interceptCalls, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { prng } from "./support/soak-writer.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const KiB = 1024;

/** Small files in a few packages and some of 100-700 KiB (one chunk or a few): several upload batches. */
function tree(random: () => number, seed: number): Record<string, string | Uint8Array> {
  const files: Record<string, string | Uint8Array> = {};
  for (let i = 0; i < 300; i++) files[`pkg${i % 7}/f${i}.js`] = `module ${seed} ${i}\n`.repeat(1 + (i % 13));
  for (let i = 0; i < 40; i++)
    files[`bin/b${i}.bin`] = pseudoRandom(100 * KiB + Math.floor(random() * 800 * KiB), seed * 100 + i);
  return files;
}

const FAILURES: readonly (() => Error)[] = [
  () => new ProtocolError("internal", "injected: the server failed"),
  () => new ProtocolError("payload_too_large", "injected: over the budget", { limit: 1 }),
  () => Object.assign(new Error("injected: socket hang up"), { code: "ECONNRESET" }),
];

const FAULTY: ReadonlySet<OpName> = new Set(["has", "putObjects", "push"]);

describe.each(TRANSPORTS)("a first push failing at random over $name", ({ factory }) => {
  it.each([1, 2, 3])(
    "seed %i: a later sync completes it, and nothing is referenced before it is stored",
    async (seed) => {
      const random = prng(seed * 7919);
      const ws = newWorkspace();
      let faults = 0;
      let failing = true;
      const faulty = interceptCalls(factory, async (op, next) => {
        if (failing && FAULTY.has(op) && random() < 0.35) {
          faults++;
          const failure = FAILURES[Math.floor(random() * FAILURES.length)] as () => Error;
          // Before the server saw the call, or after it did the work.
          if (random() < 0.5) await next();
          throw failure();
        }
        return next();
      });
      const host = openHost(ws, { storeKind: "disk", factory: faulty });
      writeTree(host.root, tree(random, seed));
      let failed = 0;
      for (let attempt = 0; ; attempt++) {
        if (attempt === 8) failing = false;
        try {
          await host.engine.sync();
          break;
        } catch (e) {
          failed++;
          expect(attempt, `seed ${seed}: still failing with faults off: ${e}`).toBeLessThan(8);
        }
      }
      console.log(`push-faults seed ${seed}: ${faults} calls failed, ${failed} syncs failed`);
      expect(faults, `seed ${seed}: no fault injected`).toBeGreaterThan(0);
      failing = false;
      const again = await host.engine.sync();
      expect(again.entriesSent, `seed ${seed}: a further sync`).toBe(0);
      expect(again.objectBytesSent, `seed ${seed}: a further sync`).toBe(0);
      const other = openHost(ws, { factory, storeKind: "memory" });
      await other.engine.sync();
      expect(snapshot(other.root), `seed ${seed}: a new host's tree`).toEqual(snapshot(host.root));
    },
  );
});
