/**
 * A store written before ctime joined a file's fingerprint holds
 * `f<size>:<mtime ns>:<inode>:<mode>`, which no fingerprint taken now equals:
 * the first sync after the upgrade reads every file once, sends nothing for
 * the files it finds unchanged (no conflict either), and finds the edit the
 * old fingerprint missed. Failed on main 3000cf5 (the edit not sent).
 */
import { lstatSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IgnoreRules } from "../../client/scan/ignore-rules.ts";
import { Scanner } from "../../client/scan/scanner.ts";
import { statKey } from "../../client/scan/stat-key.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { pastRacyWindow, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const factory = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;
const T = 1_700_000_000;

/** A file's fingerprint as the scanner made it before ctime joined it. */
function oldFileKey(abs: string): string {
  const st = lstatSync(abs, { bigint: true });
  return `f${st.size}:${st.mtimeNs}:${st.ino}:${st.mode}`;
}

describe("a store written before ctime joined a file's fingerprint", () => {
  it("reads every file once, sends only the edit the old fingerprint missed, and reads nothing after", async () => {
    const ws = newWorkspace();
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`d${i % 4}/f${i}`] = `file ${i}\n`.repeat(i + 1);
    const first = openHost(ws, { storeKind: "disk", factory });
    writeTree(first.root, files);
    for (const path of Object.keys(files)) utimesSync(join(first.root, path), T, T);
    await first.engine.sync();
    // The store as the old scanner left it.
    first.store.transaction(() => {
      for (const r of [...first.store.all()]) {
        if (r.entry.kind === "file") first.store.put({ ...r, stat: oldFileKey(join(first.root, r.entry.path)) });
      }
    });
    await first.close();
    // A same-size rewrite given back its mtime, which the old fingerprint took for unchanged.
    writeFileSync(join(first.root, "d1/f5"), "FILE 5\n".repeat(6));
    utimesSync(join(first.root, "d1/f5"), T, T);
    // So the files read now get fingerprints.
    await pastRacyWindow();

    const upgraded = openHost(ws, { storeKind: "disk", factory, root: first.root });
    const report = await upgraded.engine.sync();
    expect(report.sent.map((s) => s.path)).toEqual(["d1/f5"]);
    expect([report.objectsSent, report.conflicts, report.entriesReceived]).toEqual([1, [], 0]);
    const files40 = [...upgraded.store.all()].filter((r) => r.entry.kind === "file");
    expect(files40).toHaveLength(40);
    for (const r of files40) {
      expect(r.stat, r.entry.path).toBe(statKey(lstatSync(join(first.root, r.entry.path), { bigint: true })));
    }
    const scan = new Scanner(first.root, upgraded.store, IgnoreRules.load(first.root, [])).scan();
    expect([scan.hashedFiles, scan.changes]).toEqual([0, []]);
  });
});
