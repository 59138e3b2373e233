/**
 * A pull with write slots (client/engine/write-slots.ts) raced by local work
 * while files are in the slots: a save at a target whose new file is being
 * written, and a directory that files are being written into replaced by a
 * file. The pull must keep every local change (a conflict copy, never an
 * overwrite), refuse and record exactly what the synchronous pull does, leave
 * no temporary behind, and the next syncs must converge.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TEMP_PREFIX } from "../../client/scan/ignore-rules.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";
import { WRITE_SLOT_SETTINGS } from "./support/write-slots.ts";

afterEach(cleanup);

const factory = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;

/** 3 directories of 12 files each, each file's content its own. */
function sourceTree(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let d = 0; d < 3; d++) for (let f = 0; f < 12; f++) files[`d${d}/f${f}`] = `file ${d} ${f}\n`.repeat(f + 1);
  return files;
}

/** Local work done on the pulling host at the moment the pull is about to place a path. */
const RACES: Record<string, (root: string) => void> = {
  // A save at the target itself, made while its new version was written.
  "d0/f3": (root) => writeFileSync(join(root, "d0/f3"), "saved locally\n"),
  // The directory the next files are being written into, replaced by a file.
  "d1/f5": (root) => {
    rmSync(join(root, "d1"), { recursive: true });
    writeFileSync(join(root, "d1"), "a file where the directory was\n");
  },
  // A new directory at a path a later file of the page goes to.
  "d2/f1": (root) => mkdirSync(join(root, "d2/f7")),
};

/** A conflict copy's name without its host and time. */
const copyName = (text: string) => text.replace(/\.conflict-[0-9a-f]+-[0-9]+-[0-9]+/g, ".conflict");
const named = (tree: Record<string, string>) =>
  Object.fromEntries(Object.entries(tree).map(([path, what]) => [copyName(path), what]));

describe("a pull with write slots, raced by local work", () => {
  it("keeps, refuses and records exactly what the synchronous pull does", async () => {
    const outcomes = [];
    for (const slots of WRITE_SLOT_SETTINGS) {
      const ws = newWorkspace();
      const src = openHost(ws, { storeKind: "memory", factory });
      writeTree(src.root, sourceTree());
      await src.engine.sync();
      process.env.FERRY_WRITE_SLOTS = String(slots);
      try {
        const fired = new Set<string>();
        /** Temporaries beside each raced path as the race ran: other files still in their slots. */
        const temps: string[] = [];
        const dst = openHost(ws, {
          storeKind: "memory",
          factory,
          beforeReplace: (path) => {
            const race = RACES[path];
            if (race && !fired.has(path)) {
              fired.add(path);
              temps.push(...readdirSync(join(dst.root, dirname(path))).filter((n) => n.startsWith(TEMP_PREFIX)));
              race(dst.root);
            }
          },
        });
        const report = await dst.engine.sync();
        const tree = named(snapshot(dst.root));
        const records = [...dst.store.all()]
          .map((r) => copyName(`${r.entry.kind} ${r.entry.path} ${r.stat !== null}`))
          .sort();
        const refused = report.refused.map((r) => r.path).sort();
        const conflicts = report.conflicts.map((c) => c.path).sort();
        // The local work is sent, and both hosts end with one tree.
        await dst.engine.sync();
        await src.engine.sync();
        expect(snapshot(src.root), `${slots} slots`).toEqual(snapshot(dst.root));
        // With slots, the races did meet other files being written (each path's own temporary is one).
        if (slots > 0) expect(temps.length, "temporaries at the races").toBeGreaterThan(Object.keys(RACES).length);
        outcomes.push({ fired: [...fired].sort(), tree, records, refused, conflicts });
        await dst.close();
      } finally {
        delete process.env.FERRY_WRITE_SLOTS;
      }
    }
    const [sync, slotted] = outcomes;
    expect(sync?.fired).toEqual(Object.keys(RACES).sort());
    // No temporary left, the save kept as it was.
    expect(Object.keys(sync?.tree ?? {}).filter((p) => p.includes(".ferry-tmp-"))).toEqual([]);
    expect(sync?.conflicts).toContain("d0/f3");
    expect(slotted).toEqual(sync);
  });
});
