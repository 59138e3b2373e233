/**
 * `ferry sync` killed (SIGKILL) at a random moment, again and again: one host
 * edits its tree between rounds (new, rewritten and same-size rewritten
 * files, mode-only changes, mtimes set back, file/dir/symlink type changes,
 * names that sort differently in UTF-16 and UTF-8) and syncs; another host,
 * which never edits, syncs at the same time. Each process is killed after a
 * seeded delay, wherever it is (start, hello, scan, upload, push, pull, exit
 * with its store's log left behind). Then both sync to the end: the editing
 * host's tree is exactly what it wrote (nothing pulled over it), the other
 * host and a new one hold the same tree with the same mtimes, the other host
 * never sent anything, and a further sync on each finds nothing. Two syncs at
 * once on one store: one of them is refused with `store_locked`, and nothing
 * is lost either way. Seeded: the seed is in every failure message.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, cliEnv, ferry, ferryAsync, ferryRun, json } from "./support/cli.ts";
import { edit, snapshotWithMtimes } from "./support/edits.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { prng } from "./support/soak-writer.ts";

afterEach(cleanup);

const SEEDS = [1, 2].map((n) => Number(process.env.FERRY_FUZZ_SEED ?? 0) + n);

describe("ferry sync killed at random moments", { timeout: 300_000 }, () => {
  it.each(SEEDS)(
    "seed %i: every edit reaches every host, nothing pulled over the editor, nothing sent back",
    async (seed) => {
      const random = prng(seed);
      const ws = newWorkspace();
      const env = cliEnv(ws);
      const editor = tempDir("kill-editor");
      const reader = tempDir("kill-reader");
      for (let i = 0; i < 40; i++) edit(editor, random, i);
      expect(ferry(["sync", editor], env).status, `seed ${seed}: the first sync`).toBe(0);
      let killed = 0;
      let finished = 0;
      for (let round = 0; round < 6; round++) {
        for (let i = Math.floor(random() * 8); i > 0; i--) edit(editor, random, 1000 * round + i);
        const runs = [editor, reader].map(async (dir) => {
          const child = ferryAsync(["sync", dir], env);
          let stderr = "";
          child.stderr?.on("data", (d: Buffer) => {
            stderr += d.toString();
          });
          const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
            child.on("exit", (code, signal) => resolve(signal ?? code)),
          );
          const delay = Math.floor(random() * 3000);
          const timer = setTimeout(() => child.kill("SIGKILL"), delay);
          const end = await exited;
          clearTimeout(timer);
          if (end === "SIGKILL") killed++;
          else {
            finished++;
            expect(end, `seed ${seed} round ${round} ${dir}: ${stderr}`).toBe(0);
          }
        });
        await Promise.all(runs);
      }
      const wrote = snapshotWithMtimes(editor);
      const sync = (dir: string): CliResult => {
        const r = ferry(["sync", dir, "--json"], env);
        expect(r.status, `seed ${seed} ${dir}: ${r.stderr}`).toBe(0);
        return r;
      };
      sync(editor);
      const last = json<{ sent: unknown[]; received: unknown[] }>(sync(reader));
      expect(last.sent, `seed ${seed}: the reader sent`).toEqual([]);
      expect(snapshotWithMtimes(editor), `seed ${seed}: the editor's tree changed`).toEqual(wrote);
      expect(snapshotWithMtimes(reader), `seed ${seed}: the reader's tree`).toEqual(wrote);
      const fresh = tempDir("kill-fresh");
      sync(fresh);
      expect(snapshotWithMtimes(fresh), `seed ${seed}: a new host's tree`).toEqual(wrote);
      for (const dir of [editor, reader, fresh]) {
        expect(json(sync(dir)), `seed ${seed} ${dir}: a further sync`).toMatchObject({ sent: [], received: [] });
      }
      console.log(`kill-anywhere seed ${seed}: ${killed} runs killed, ${finished} ended on their own`);
      expect(killed + finished).toBe(12);
    },
  );

  it("refuses the second of two syncs at once on one store with store_locked, and loses nothing", async () => {
    const random = prng(Number(process.env.FERRY_FUZZ_SEED ?? 0) + 77);
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = tempDir("two-at-once");
    for (let i = 0; i < 60; i++) edit(dir, random, i);
    const both = await Promise.all([0, 1].map(() => ferryRun(["sync", dir, "--json"], env)));
    for (const r of both) {
      if (r.status !== 0) {
        expect(r.status, r.stderr).toBe(1);
        expect(r.stderr).toMatch(/^ferry: store_locked: /);
      }
    }
    expect(both.some((r) => r.status === 0)).toBe(true);
    console.log(`two syncs at once: exit statuses ${both.map((r) => r.status).join(", ")}`);
    const wrote = snapshotWithMtimes(dir);
    ferry(["sync", dir, "--json"], env);
    const fresh = tempDir("two-at-once-fresh");
    expect(ferry(["sync", fresh, "--json"], env).status).toBe(0);
    expect(snapshotWithMtimes(fresh)).toEqual(wrote);
    expect(snapshotWithMtimes(dir)).toEqual(wrote);
  });
});
