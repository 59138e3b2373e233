/**
 * The measurement behind the packs table (worker/sync/packs.ts): storing an
 * npm-like tree's objects in ~8 MiB requests, reading them all back with
 * objects/get the way a restoring host asks (its whole remaining list, 8 MiB
 * answers), and a 100,000-hash probe, each timed inside the object against
 * real Durable Object SQLite. Timing is logged, not asserted; what is
 * asserted is that every byte comes back.
 *
 * `npm run bench:sqlite` stores 16 MiB; `FERRY_STORE_MIB=146 npm run
 * bench:sqlite` stores the 146 MiB a 29,000-file npm tree pushes.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../protocol/hash.ts";
import { LIMITS, MiB } from "../../protocol/limits.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { freshWorkspace } from "../../test/worker/helpers.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { probeHashes } from "../../worker/sync/hash-list.ts";
import { getObjects } from "../../worker/sync/objects.ts";
import { storeObjects } from "../../worker/sync/packs.ts";

/** The binding vitest.bench.config.ts sets from the environment (not one of worker/env.ts's). */
const TOTAL_BYTES = Number(Reflect.get(env, "FERRY_STORE_MIB") ?? 16) * MiB;
const REQUEST_BYTES = 8 * MiB;
const PROBE = 100_000;

/** sfc32, seeded: the same tree on every run. */
function random(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 0x1_0000_0000;
  };
  for (let i = 0; i < 15; i++) next();
  return next;
}

/** File sizes as bench/lib/tree.ts draws them (log-normal, median ~1.3 KB, a few large), cut into 1 MiB chunks. */
function chunkSizes(total: number): number[] {
  const rng = random(146);
  const logNormal = (median: number, sigma: number) =>
    median * Math.exp(sigma * Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng()));
  const sizes: number[] = [];
  let bytes = 0;
  while (bytes < total) {
    let size =
      rng() < 1 / 800
        ? Math.min(3 * MiB, Math.round(logNormal(400_000, 0.8)))
        : Math.min(256 * 1024, Math.round(logNormal(1300, 1.6)));
    size = Math.max(1, size);
    while (size > 0) {
      const chunk = Math.min(size, LIMITS.maxObjectBytes);
      sizes.push(chunk);
      bytes += chunk;
      size -= chunk;
    }
  }
  return sizes;
}

/** Requests of at most REQUEST_BYTES and maxObjects objects, as a pushing host sends them. */
function requests(sizes: readonly number[]): number[][] {
  const out: number[][] = [[]];
  let bytes = 0;
  sizes.forEach((size, i) => {
    const last = out[out.length - 1] as number[];
    if (last.length > 0 && (bytes + size > REQUEST_BYTES || last.length >= LIMITS.maxObjects)) {
      out.push([i]);
      bytes = size;
    } else {
      last.push(i);
      bytes += size;
    }
  });
  return out;
}

async function objectOf(i: number, size: number): Promise<ObjectBlob> {
  const rng = random(i + 1);
  const words = new Uint32Array(Math.ceil(size / 4));
  for (let w = 0; w < words.length; w++) words[w] = (rng() * 0x1_0000_0000) >>> 0;
  const bytes = new Uint8Array(words.buffer, 0, size);
  return { hash: await sha256(bytes), bytes };
}

describe("object store timing", () => {
  it("stores, reads back and probes an npm-like tree's objects", async () => {
    const ws = freshWorkspace();
    const sizes = chunkSizes(TOTAL_BYTES);
    const hashes: Uint8Array[] = [];
    let storeMs = 0;
    let storeStatements = 0;
    for (const request of requests(sizes)) {
      const objects = await Promise.all(request.map((i) => objectOf(i, sizes[i] as number)));
      hashes.push(...objects.map((o) => o.hash));
      const { ms, statements } = await runInDurableObject(ws, (instance: WorkspaceObject) => {
        const before = instance.db.meter.statements;
        const started = performance.now();
        instance.db.transaction(() => storeObjects(instance.db, objects, Date.now()));
        return { ms: performance.now() - started, statements: instance.db.meter.statements - before };
      });
      storeMs += ms;
      storeStatements += statements;
    }
    const total = sizes.reduce((n, s) => n + s, 0);
    console.log(
      `store: ${sizes.length} objects, ${(total / MiB).toFixed(1)} MiB in ${requests(sizes).length} requests: ` +
        `${storeMs.toFixed(0)} ms, ${storeStatements} statements`,
    );

    const read = await runInDurableObject(ws, async (instance: WorkspaceObject) => {
      const started = performance.now();
      let queue = hashes;
      let bytes = 0;
      let answers = 0;
      while (queue.length > 0) {
        const got = await getObjects({ db: instance.db, now: Date.now }, { hashes: queue.slice(0, LIMITS.maxHas) });
        if (got.objects.length === 0 || got.missing.length > 0) throw new Error("objects/get lost objects");
        for (const o of got.objects) bytes += o.bytes.byteLength;
        queue = queue.slice(got.objects.length);
        answers++;
      }
      return { ms: performance.now() - started, bytes, answers };
    });
    console.log(`objects/get: ${read.answers} answers, ${(read.bytes / MiB).toFixed(1)} MiB: ${read.ms.toFixed(0)} ms`);
    expect(read.bytes).toBe(total);

    const probe = Array.from({ length: PROBE }, (_, i) =>
      i % 2 === 0 && i / 2 < hashes.length ? (hashes[i / 2] as Uint8Array) : crypto.getRandomValues(new Uint8Array(32)),
    );
    const held = await runInDurableObject(ws, (instance: WorkspaceObject) => {
      const started = performance.now();
      const have = probeHashes(instance.db, probe);
      console.log(`has of ${PROBE}: ${(performance.now() - started).toFixed(0)} ms`);
      return have.filter(Boolean).length;
    });
    expect(held).toBe(Math.min(hashes.length, PROBE / 2));
  }, 600_000);
});
