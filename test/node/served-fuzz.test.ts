/**
 * A command served by a running `ferry sync --watch` (resident-server.ts),
 * attacked with seeded timing: the watch's own sync may be pending, running
 * or idle when the command arrives. Whatever it does with the watch's work,
 * a served `sync` sends every change made on disk before it started and
 * pulls what the server had when it started; a served `pull` brings what the
 * server had. Each round makes local edits (under mine/) and another host's
 * pushed edits (under theirs/), waits a seeded moment (none, within the
 * watch's settle time, or while its own sync runs), then runs the command
 * and checks the moment it exits, without waiting for anything else.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HttpTransport } from "../../client/transport/http-transport.ts";
import { childrenEndedAfterEach, cliEnv, ferryAsync, ferryRun, outputOf } from "./support/cli.ts";
import { edit, snapshotWithMtimes } from "./support/edits.ts";
import { cleanup, newWorkspace, openHost, tempDir } from "./support/hosts.ts";
import { prng } from "./support/soak-writer.ts";
import { writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);

const running = childrenEndedAfterEach();

const ROUNDS = 8;
const http = (endpoint: ConstructorParameters<typeof HttpTransport>[0]) => new HttpTransport(endpoint);

/** The paths under `prefix/` of a tree, with their mtimes (what a round compares). */
function under(root: string, prefix: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(snapshotWithMtimes(root)).filter(([p]) => p === prefix || p.startsWith(`${prefix}/`)),
  );
}

/** What the server holds under `prefix/`, as a fresh host pulls it. */
async function serverUnder(ws: string, prefix: string): Promise<Record<string, string>> {
  const fresh = openHost(ws, { factory: http, storeKind: "memory" });
  await fresh.engine.sync();
  await fresh.close();
  return under(fresh.root, prefix);
}

describe("a command served by a running watch, at seeded moments", () => {
  it.each([1, 2])("seed %i: sends what changed before it and pulls what the server had", async (seed) => {
    const random = prng(seed);
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = tempDir("served-fuzz");
    writeTree(dir, { "mine/seed.txt": "mine\n", "theirs/seed.txt": "theirs\n" });
    const other = openHost(ws, { factory: http, storeKind: "disk" });

    // Over WebSocket, so the other host's pushes poke the watch into syncs of its own.
    const watch = ferryAsync(["sync", dir, "--watch", "--interval", "600000"], env);
    running.push(watch);
    const log = outputOf(watch);
    await until(
      () => `the watch to serve: ${log()}`,
      () => /watching/.test(log()),
    );
    await other.engine.sync();

    for (let round = 0; round < ROUNDS; round++) {
      const context = `seed ${seed} round ${round}`;
      const local = Math.floor(random() * 4);
      for (let i = 0; i < local; i++) edit(join(dir, "mine"), random, seed * 1000 + round * 10 + i);
      const remote = Math.floor(random() * 3);
      for (let i = 0; i < remote; i++) edit(join(other.root, "theirs"), random, seed * 1000 + round * 10 + 5 + i);
      if (remote > 0) await other.engine.sync();
      const verb = random() < 0.75 ? "sync" : "pull";
      const wait = random();
      // None; within the watch's settle time (5 ms); or while its own sync runs.
      const ms = wait < 0.4 ? 0 : wait < 0.7 ? 1 + random() * 8 : 20 + random() * 300;
      await new Promise((r) => setTimeout(r, ms));

      const r = await ferryRun([verb, dir], env);
      expect([r.status, r.stderr], `${context}: ${verb}`).toEqual([0, ""]);
      // The moment it exits: what the other host pushed before it is on this disk ...
      expect(under(dir, "theirs"), `${context}: ${verb} after ${Math.round(ms)} ms`).toEqual(
        under(other.root, "theirs"),
      );
      // ... and a sync sent what was changed here before it.
      if (verb === "sync") {
        expect(under(dir, "mine"), `${context}: sync after ${Math.round(ms)} ms`).toEqual(
          await serverUnder(ws, "mine"),
        );
      }
      await other.engine.sync();
    }
    expect(watch.exitCode, log()).toBeNull();
    await other.close();
  });
});
