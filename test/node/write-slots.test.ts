/**
 * A pull with write slots (client/engine/write-slots.ts: new files written on
 * the thread pool while the next entries are decided) places and records
 * exactly what the synchronous pull does, with the same requests.
 */
import { lstatSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { statKey } from "../../client/scan/stat-key.ts";
import type { OpName } from "../../protocol/ops.ts";
import { cleanup, interceptCalls, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { chmod, pseudoRandom, snapshot, symlink, writeTree } from "./support/tree.ts";
import { WRITE_SLOT_SETTINGS } from "./support/write-slots.ts";

afterEach(cleanup);

const MODES = [0o600, 0o644, 0o664, 0o666, 0o700, 0o755, 0o777];

/** 240 files in 12 directories: every mode, many mtimes, empty files, contents shared by several files, one large file. */
function sourceTree(root: string): void {
  const files: Record<string, string | Uint8Array> = {};
  for (let i = 0; i < 240; i++) {
    const dir = `pkg-${i % 12}/${i % 3 === 0 ? "lib/" : ""}`;
    // Every fifth file repeats another's content: its chunk is fetched once, then read back from that file.
    files[`${dir}f${i}.js`] = i % 5 === 0 ? `shared ${i % 4}\n` : i % 7 === 0 ? "" : `module ${i}\n`.repeat(i);
  }
  files["big/blob.bin"] = pseudoRandom(3 * 1024 * 1024, 7);
  writeTree(root, files);
  Object.keys(files).forEach((path, i) => {
    chmod(root, path, MODES[i % MODES.length] as number);
    utimesSync(join(root, path), 1_700_000_000 + i * 61.5, 1_700_000_000 + i * 61.5);
  });
  symlink(root, "pkg-0/link", "f0.js");
}

describe("a pull with write slots", () => {
  it("places, records and fetches exactly what a pull without them does", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "disk", factory: (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory });
    sourceTree(src.root);
    await src.engine.sync();

    const pulls = [];
    for (const slots of WRITE_SLOT_SETTINGS) {
      process.env.FERRY_WRITE_SLOTS = String(slots);
      try {
        const calls: OpName[] = [];
        const factory = interceptCalls((TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory, (op, next) => {
          calls.push(op);
          return next();
        });
        const dst = openHost(ws, { storeKind: "memory", factory });
        const report = await dst.engine.sync();
        const records = [...dst.store.all()].map((r) => ({ ...r, stat: r.stat !== null }));
        // Each file's fingerprint is the file's as placed: the next sync reads nothing and sends nothing.
        for (const r of dst.store.all()) {
          if (r.entry.kind === "file")
            expect(r.stat, r.entry.path).toBe(statKey(lstatSync(join(dst.root, r.entry.path), { bigint: true })));
        }
        const again = await dst.engine.sync();
        pulls.push({
          tree: snapshot(dst.root),
          mtimes: Object.fromEntries(
            records
              .filter((r) => r.entry.kind === "file")
              .map((r) => [r.entry.path, lstatSync(join(dst.root, r.entry.path)).mtimeMs]),
          ),
          records,
          calls,
          counts: [report.objectsReceived, report.objectBytesReceived, report.refused.length],
          again: [again.entriesSent, again.objectBytesSent],
        });
      } finally {
        delete process.env.FERRY_WRITE_SLOTS;
      }
    }
    const [sync, slotted] = pulls;
    expect(sync?.tree).toEqual(snapshot(src.root));
    expect(sync?.again).toEqual([0, 0]);
    expect(slotted).toEqual(sync);
  });
});
