/**
 * The pull's batch writer (FERRY_PULL_WRITER=1, client/engine/batch-writer.ts):
 * new files written on a worker thread. A pull with it places the same tree,
 * with the same modes, mtimes and fingerprints, in the same requests and
 * bytes, as the one-thread pull; a file made locally at a path the worker
 * links is kept (the link fails, the change is applied again on the main
 * thread, which keeps a conflict copy), and no temporary is left.
 */
import { lstatSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { statKey } from "../../client/scan/stat-key.ts";
import { cleanup, type Host, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { pseudoRandom, snapshot, symlink, variedFiles, writeTree, writeVaried } from "./support/tree.ts";

const factory = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;
const before = process.env.FERRY_PULL_WRITER;
beforeEach(() => {
  process.env.FERRY_PULL_WRITER = "1";
});
afterEach(async () => {
  if (before === undefined) delete process.env.FERRY_PULL_WRITER;
  else process.env.FERRY_PULL_WRITER = before;
  await cleanup();
});

/**
 * 400 files in 16 directories (several batches): modes, mtimes, empty files, shared contents
 * (a chunk another queued file holds), one file the worker takes at its largest and one it does not.
 */
function sourceTree(root: string): string[] {
  const files = variedFiles(400, 16);
  files["big/a.bin"] = pseudoRandom(900 * 1024, 3);
  files["big/b.bin"] = pseudoRandom(3 * 1024 * 1024, 7);
  const paths = writeVaried(root, files);
  symlink(root, "pkg-0/link", "f0.js");
  return paths;
}

const mtimesOf = (root: string, paths: readonly string[]) =>
  Object.fromEntries(paths.map((p) => [p, lstatSync(join(root, p), { bigint: true }).mtimeNs / 1_000_000n]));

/** Every file record's fingerprint against the file on disk. */
function fingerprints(host: Host): Record<string, [string | null, string | null]> {
  const out: Record<string, [string | null, string | null]> = {};
  for (const r of host.store.all()) {
    if (r.entry.kind === "file")
      out[r.entry.path] = [r.stat, statKey(lstatSync(join(host.root, r.entry.path), { bigint: true }))];
  }
  return out;
}

describe("a pull with the batch writer", () => {
  it("places the tree, modes, mtimes and fingerprints of the one-thread pull, in the same requests and bytes", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "disk", factory });
    const paths = sourceTree(src.root);
    await src.engine.sync();

    const withWriter = openHost(ws, { storeKind: "disk", factory });
    const report = await withWriter.engine.sync();
    process.env.FERRY_PULL_WRITER = "0";
    const oneThread = openHost(ws, { storeKind: "disk", factory });
    const expected = await oneThread.engine.sync();

    expect(report.refused).toEqual([]);
    expect(snapshot(withWriter.root)).toEqual(snapshot(src.root));
    expect(mtimesOf(withWriter.root, paths)).toEqual(mtimesOf(src.root, paths));
    const pick = (r: typeof report) => [r.roundTrips, r.objectsReceived, r.objectBytesReceived, r.entriesReceived];
    expect(pick(report)).toEqual(pick(expected));
    const prints = fingerprints(withWriter);
    expect(Object.keys(prints)).toHaveLength(paths.length);
    for (const [path, [recorded, onDisk]] of Object.entries(prints)) expect(recorded, path).toBe(onDisk);
    const again = await withWriter.engine.sync();
    expect([again.entriesSent, again.objectBytesSent, again.entriesReceived]).toEqual([0, 0, 0]);
  });

  it("keeps a file made locally where the worker links one: a conflict copy, never an overwrite", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "memory", factory });
    const files: Record<string, string> = {};
    for (let f = 0; f < 100; f++) files[`d/f${f}`] = `file ${f}\n`;
    writeTree(src.root, files);
    await src.engine.sync();

    // One file of a full batch, one of the last (partial) batch: made once each, right before the link.
    const raced = ["d/f3", "d/f70"];
    const fired = new Set<string>();
    const dst = openHost(ws, {
      storeKind: "memory",
      factory,
      atReplace: (path) => {
        if (!raced.includes(path) || fired.has(path)) return;
        fired.add(path);
        writeFileSync(join(dst.root, path), "mine\n");
      },
    });
    const report = await dst.engine.sync();
    const tree = snapshot(dst.root);
    expect([...fired].sort()).toEqual(raced);
    expect(Object.keys(tree).filter((p) => p.includes(".ferry-tmp-"))).toEqual([]);
    expect(report.conflicts.map((c) => c.path).sort()).toEqual(raced);
    for (const path of raced) {
      expect(readFileSync(join(dst.root, path), "utf8")).toBe(files[path]);
      const copy = report.conflicts.find((c) => c.path === path)?.copy as string;
      expect(readFileSync(join(dst.root, copy), "utf8")).toBe("mine\n");
    }
    await dst.engine.sync();
    await src.engine.sync();
    expect(snapshot(src.root)).toEqual(snapshot(dst.root));
    await dst.close();
  });
});
