/**
 * A pull killed mid-way: what it already wrote is known to the store at the
 * next start (a journal of the page being applied), so a file another host
 * deleted meanwhile is deleted here too, never pushed back as new; and the
 * temporary files it left are removed at the next start.
 */
import { existsSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const FILES = 20;
const files = () => Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`d/f${i}.txt`, `file ${i}\n`]));

class Killed extends Error {}

describe.each(TRANSPORTS)("a pull interrupted over $name", ({ factory }) => {
  it.each([
    { how: "fails", dies: false },
    { how: "is killed (nothing more reaches the store)", dies: true },
  ])(
    "records what it wrote when the pull $how, so a file deleted elsewhere before the rerun is not pushed back",
    async ({ dies }) => {
      const ws = newWorkspace();
      const a = openHost(ws, { factory, storeKind: "disk" });
      writeTree(a.root, files());
      await a.engine.sync();

      let writes = 0;
      const b = openHost(ws, {
        factory,
        storeKind: "disk",
        beforeReplace: () => {
          if (++writes !== FILES / 2) return;
          if (dies) b.store.close();
          throw new Killed();
        },
      });
      await expect(b.engine.sync()).rejects.toThrow();
      const written = readdirSync(join(b.root, "d")).length;
      expect(written).toBeGreaterThan(0);
      await b.close();

      // A deletes the whole tree, then B starts again from its store.
      rmSync(join(a.root, "d"), { recursive: true });
      await a.engine.sync();
      const b2 = openHost(ws, { factory, storeKind: "disk", root: b.root });
      const report = await b2.engine.sync();
      expect(report.entriesSent).toBe(0);
      expect(existsSync(join(b.root, "d"))).toBe(false);
      await a.engine.sync();
      expect(snapshot(a.root)).toEqual({});
      expect(snapshot(b.root)).toEqual({});
    },
  );

  it("removes the temporary files a killed pull left, at the next start", async () => {
    const ws = newWorkspace();
    const a = openHost(ws, { factory, storeKind: "disk" });
    writeTree(a.root, { "keep.txt": "k\n" });
    // Written by a process that no longer runs (no pid is this large), just now.
    writeFileSync(join(a.root, ".ferry-tmp-4194999-1"), "half a download");
    symlinkSync("target", join(a.root, ".ferry-tmp-4194999-2"));
    const now = new Date();
    utimesSync(join(a.root, ".ferry-tmp-4194999-1"), now, now);
    await a.engine.sync();
    expect(readdirSync(a.root).sort()).toEqual([".ferry", "keep.txt"]);
  });
});
