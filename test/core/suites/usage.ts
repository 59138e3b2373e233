/**
 * The storage figures of `GET /stats` (worker/sync/gc/usage.ts, computed in
 * SQL) after every step of seeded random histories: pushes of new and
 * shared content, deletions, a file replacing a directory's subtree, a
 * restore of a state only history holds, uploads no entry names yet, and
 * collections. Each step's answer must equal a recount by the walk the
 * server used before (test/core/usage-walk.ts).
 */
import { describe, expect, it } from "vitest";
import type { Entry, FileEntry } from "../../../protocol/entry.ts";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import { CollectionRun } from "../../../worker/sync/gc/collect.ts";
import { readUsage } from "../../../worker/sync/gc/usage.ts";
import { blob, dir, freshWorkspace, gone, ok, TestHost } from "../helpers.ts";
import { walkedFigures, walkUsage } from "../usage-walk.ts";

const SEEDS = [1, 2, 3];
const STEPS = 40;
const FILE_PATHS = ["a", "b", "d/x", "d/y", "d/e/z"];

/** A small deterministic generator (xorshift32): `pick(n)` is in [0, n). */
function generator(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

function file(path: string, chunks: readonly ObjectBlob[]): FileEntry {
  const size = chunks.reduce((n, c) => n + c.bytes.byteLength, 0);
  return { kind: "file", path, mode: 0o644, mtime: 0, size, chunks: chunks.map((c) => c.hash) };
}

/** The directories a file path needs, so every pack is a tree. */
function parents(path: string): Entry[] {
  const parts = path.split("/").slice(0, -1);
  return parts.map((_, i) => dir(parts.slice(0, i + 1).join("/")));
}

export function usageSuite(): void {
  describe("storage usage", () => {
    it.each(SEEDS)("equals a full recount after every step of random history %i", async (seed) => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const pick = generator(seed);
      // Tiny objects stay inline in their index row; longer ones go to packs.
      const blobs = await Promise.all(
        Array.from({ length: 10 }, (_, i) => blob(i % 2 === 0 ? `small ${i}` : `${"packed ".repeat(20)}${i}`)),
      );
      const some = () => Array.from({ length: 1 + pick(3) }, () => blobs[pick(blobs.length)] as ObjectBlob);
      /** Every file state pushed so far: a restore pushes one of them again. */
      const written: FileEntry[] = [];
      let clock = Date.now();
      /** The figures that were ever above zero, and whether a collection freed anything: the history was not trivial. */
      const seen = new Set<string>();
      for (let step = 0; step < STEPS; step++) {
        const path = FILE_PATHS[pick(FILE_PATHS.length)] as string;
        switch (pick(7)) {
          case 0:
          case 1: {
            const chunks = some();
            const entry = file(path, chunks);
            written.push(entry);
            await host.push([...parents(path), entry], chunks);
            break;
          }
          case 2:
            await host.push([gone(path)]);
            break;
          case 3: {
            // A file where a directory was: its subtree becomes tombstones.
            const chunks = some();
            await host.push([file("d", chunks)], chunks);
            break;
          }
          case 4: {
            const old = written[pick(written.length + 1)];
            if (!old) break;
            const chunks = old.chunks.map((h) => blobs.find((b) => b.hash === h) as ObjectBlob);
            await host.push([...parents(old.path), old], chunks);
            break;
          }
          case 5:
            // Uploads no entry names yet.
            await ok(ws, "putObjects", { objects: some() });
            break;
          case 6: {
            // A collection as of a day later, keeping nothing past its moment.
            clock += 86_400_000;
            const at = clock;
            await ws.withDb(async (ctx) => {
              const retention = { historyMs: pick(2) * 3_600_000, graceMs: 0, horizonMs: 0, packGraceMs: 0 };
              const run = CollectionRun.start({ ...ctx, now: () => at }, retention, 3);
              while (!run.done) await run.step();
              if (run.freed.objects + run.freed.versions + run.freed.tombstones > 0) seen.add("freed");
            });
            break;
          }
        }
        await ws.withDb((ctx) => {
          const figures = walkedFigures(readUsage(ctx, null));
          expect(figures, `step ${step}`).toEqual(walkUsage(ctx.db));
          for (const [k, v] of Object.entries(figures)) if (v > 0) seen.add(k);
        });
      }
      expect([...seen].sort()).toEqual(
        [
          "freed",
          "historyBytes",
          "liveBytes",
          "objects",
          "packs",
          "storedBytes",
          "tombstones",
          "unreferencedBytes",
          "versions",
        ].sort(),
      );
    });
  });
}
