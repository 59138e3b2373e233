/**
 * `ferry sync` killed (SIGKILL) mid-pull, at several moments: the next sync must end
 * with exactly the source's tree, nothing lost, no temporary left behind, and
 * nothing sent back; a further sync finds nothing.
 */
import { existsSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, ferryAsync, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const DIRS = 8;
const PER_DIR = 150;

/** Files placed under `root` so far (the pull goes directory by directory). */
function placed(root: string): number {
  let n = 0;
  for (let d = 0; d < DIRS; d++) {
    const dir = join(root, `d${d}`);
    if (existsSync(dir)) n += readdirSync(dir).filter((name) => name.startsWith("f")).length;
  }
  return n;
}

describe("a pull killed mid-way", { timeout: 180_000 }, () => {
  it.each([50, 600])(
    "after %i files placed: the next sync ends with the source's tree and no temporary",
    async (after) => {
      const ws = newWorkspace();
      const src = tempDir("pull-kill-src");
      const files: Record<string, string | Uint8Array> = {};
      for (let d = 0; d < DIRS; d++) {
        for (let f = 0; f < PER_DIR; f++)
          files[`d${d}/f${f}`] = f % 50 === 0 ? pseudoRandom(64 * 1024, d * 1000 + f) : `${d} ${f}\n`;
      }
      writeTree(src, files);
      for (const p of Object.keys(files)) utimesSync(join(src, p), 1_700_000_000, 1_700_000_000);
      const env = cliEnv(ws);
      expect(ferry(["sync", src], env).status).toBe(0);

      const dst = tempDir("pull-kill-dst");
      const child = ferryAsync(["sync", dst], env);
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
        child.on("exit", (code, signal) => resolve(signal ?? code)),
      );
      let ended = false;
      void exited.then(() => (ended = true));
      while (!ended && placed(dst) < after) await new Promise((resolve) => setTimeout(resolve, 2));
      child.kill("SIGKILL");
      expect(await exited, "killed before it ended").toBe("SIGKILL");
      expect(placed(dst)).toBeLessThan(DIRS * PER_DIR);

      const again = ferry(["sync", dst, "--json"], env);
      expect(again.status, again.stderr).toBe(0);
      expect(json<{ sent: unknown[] }>(again).sent).toEqual([]);
      expect(snapshot(dst)).toEqual(snapshot(src));
      const last = ferry(["sync", dst, "--json"], env);
      expect(json<{ sent: unknown[]; received: unknown[] }>(last)).toMatchObject({ sent: [], received: [] });
    },
  );
});
