/**
 * mulberry32: small, seeded, good enough to pick operations. Shared by the
 * Node soak's writers (test/node/support/soak-writer.ts) and the workerd
 * collector race (test/worker/gc-seeded-race.test.ts): a seed names a run.
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
