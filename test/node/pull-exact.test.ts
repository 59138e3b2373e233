/**
 * A first pull places every file with the source's bytes, mode and mtime,
 * every directory with its mode, and records each one with the fingerprint
 * of what it placed, ctime included: the next sync reads nothing and sends
 * nothing.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IgnoreRules } from "../../client/scan/ignore-rules.ts";
import { Scanner } from "../../client/scan/scanner.ts";
import { statKey } from "../../client/scan/stat-key.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { chmod, pseudoRandom, snapshot, symlink, variedFiles, writeVaried } from "./support/tree.ts";

afterEach(cleanup);

/** Directories' modes: some the usual umask leaves as made, some it takes bits from, some without owner write. */
const DIR_MODES = [0o755, 0o775, 0o777, 0o700, 0o750, 0o711, 0o555, 0o1775];

/** 240 files in 12 directories: every mode, many mtimes, empty files, contents shared by several files, one large file. */
function sourceTree(root: string): string[] {
  // Every fifth file repeats another's content: its chunk is fetched once, then read back from that file.
  const files = variedFiles(240, 12);
  files["big/blob.bin"] = pseudoRandom(3 * 1024 * 1024, 7);
  const paths = writeVaried(root, files);
  symlink(root, "pkg-0/link", "f0.js");
  // Children first: a directory without owner write is set last.
  for (let d = 11; d >= 0; d--) chmod(root, `pkg-${d}`, DIR_MODES[d % DIR_MODES.length] as number);
  return paths;
}

/** Each path's mtime in whole milliseconds, the wire's precision (PROTOCOL.md). */
const mtimesOf = (root: string, paths: readonly string[]) =>
  Object.fromEntries(paths.map((p) => [p, lstatSync(join(root, p), { bigint: true }).mtimeNs / 1_000_000n]));

describe("a first pull", () => {
  it("places every file's bytes, mode and mtime and every directory's mode, and records what it placed", async () => {
    const ws = newWorkspace();
    const factory = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;
    const src = openHost(ws, { storeKind: "disk", factory });
    const paths = sourceTree(src.root);
    await src.engine.sync();

    const dst = openHost(ws, { storeKind: "memory", factory });
    const report = await dst.engine.sync();
    expect(report.refused).toEqual([]);
    expect(snapshot(dst.root)).toEqual(snapshot(src.root));
    expect(mtimesOf(dst.root, paths)).toEqual(mtimesOf(src.root, paths));
    let files = 0;
    for (const r of dst.store.all()) {
      if (r.entry.kind !== "file" && r.entry.kind !== "dir") continue;
      if (r.entry.kind === "file") files++;
      // A directory without owner rwx gets its mode when the pull ends (dir-modes.ts); its record keeps the
      // fingerprint of the mode it was written under, and the next scan looks at it again (a known cost).
      else if ((r.entry.mode & 0o700) !== 0o700) continue;
      expect(r.stat, r.entry.path).toBe(statKey(lstatSync(join(dst.root, r.entry.path), { bigint: true })));
    }
    expect(files).toBe(paths.length);
    // The fingerprints are of the files as placed (their ctime moves with the link and unlink that place
    // them): a scan reads none of them again.
    const scan = new Scanner(dst.root, dst.store, IgnoreRules.load(dst.root, [])).scan();
    expect([scan.hashedFiles, scan.changes]).toEqual([0, []]);
    const again = await dst.engine.sync();
    expect([again.entriesSent, again.objectBytesSent]).toEqual([0, 0]);
  });
});
