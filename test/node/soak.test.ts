/**
 * The convergence soak: several hosts each run the real `ferry sync --watch`
 * (over WebSocket and over HTTP) while seeded random writers create, edit,
 * append, rename, delete, chmod and swap types on all of them, colliding on
 * the same paths; the server is stopped and started again mid-run. After the
 * writers stop (one of them writes large files slowly, soak-slow-writer.ts;
 * one removes whole directories and makes them again, soak-subtree-writer.ts),
 * the watchers alone must bring every host to the server's
 * state within SETTLE_MS, and every file version a writer made and no writer
 * replaced knowingly must be in the tree (support/soak-writer.ts).
 *
 * Small in CI (one seed, a few hundred operations); larger with
 * FERRY_SOAK_OPS=<n> and FERRY_SOAK_SEEDS=<a,b,...> or <first-last>.
 * A failure names its seed and prints the history of what it found wrong
 * (each watcher traces with FERRY_TRACE, support/soak-trace.ts).
 *
 * With FERRY_SOAK_GC_MS=<ms> (off by default, so CI's soak is unchanged) the
 * soak's server has an R2 bucket and graces of seconds, a collector asks it
 * for a garbage collection every <ms> from the first write until the hosts
 * converged, and the converged workspace must pass `check --deep` too
 * (support/soak-gc.ts; issue 31).
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../client/store/sqlite-store.ts";
import { childrenEndedAfterEach, cliEnv, ferryAsync, ferryRun } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { RestartableServer } from "./support/restartable-server.ts";
import { deepCheck, SOAK_GC_VARS, SoakCollector } from "./support/soak-gc.ts";
import { SlowWriter } from "./support/soak-slow-writer.ts";
import { SubtreeWriter } from "./support/soak-subtree-writer.ts";
import { historyOf } from "./support/soak-trace.ts";
import { contentDigests, Ledger, prng, Writer } from "./support/soak-writer.ts";
import { type Snapshot, snapshot } from "./support/tree.ts";

const OPS = Number(process.env.FERRY_SOAK_OPS ?? 300);
const SEEDS = parseSeeds(process.env.FERRY_SOAK_SEEDS ?? "1");
const HOSTS = 3;
/** How long the watchers alone may take to converge once the writers stop. */
const SETTLE_MS = Number(process.env.FERRY_SOAK_SETTLE_MS ?? 15_000);
/** A garbage collection every this many ms during the run (0: none, the default). */
const GC_MS = Number(process.env.FERRY_SOAK_GC_MS ?? 0);

afterEach(cleanup);

const running = childrenEndedAfterEach();

function parseSeeds(text: string): number[] {
  const range = /^(\d+)-(\d+)$/.exec(text);
  if (range) {
    const [from, to] = [Number(range[1]), Number(range[2])];
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  }
  return text.split(",").map(Number);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Watcher {
  readonly child: ChildProcess;
  readonly log: string[];
}

async function startWatch(dir: string, env: NodeJS.ProcessEnv, transport: "ws" | "http"): Promise<Watcher> {
  const child = ferryAsync(["sync", dir, "--watch", "--json", "--transport", transport, "--interval", "500"], env);
  running.push(child);
  const log: string[] = [];
  const keep = (d: Buffer) => {
    log.push(d.toString());
    if (log.length > 5000) log.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`ferry sync --watch exited ${code}: ${log.join("")}`)));
  });
  return { child, log };
}

/**
 * The server's tree, as a fresh host pulls it. The CLI runs without blocking
 * this process, which relays its connections to the server (RestartableServer).
 */
async function serverTree(env: NodeJS.ProcessEnv): Promise<{ root: string; tree: Snapshot }> {
  const root = tempDir("soak-server-copy");
  const r = await ferryRun(["pull", root, "--memory", "--json"], env);
  if (r.status !== 0) {
    const status = (await ferryRun(["status", tempDir("soak-status"), "--memory", "--json"], env)).stdout;
    throw new Error(`pull of the server's state failed: ${r.stderr}\nthe server's entries: ${status}`);
  }
  return { root, tree: snapshot(root) };
}

/** The host store's view of the differing paths and its positions, for a failure message. */
function storeRecords(root: string, diff: readonly string[]): string {
  const store = openStore("disk", root);
  try {
    const paths = diff.map((d) => d.slice(0, d.indexOf(": ")));
    const rows = paths.map((p) => {
      const r = store.get(p);
      return r ? `${p} ${r.entry.kind} host ${r.hostRev} server ${r.serverRev}` : `${p} (no record)`;
    });
    return JSON.stringify({ position: store.position(), rows });
  } finally {
    store.close();
  }
}

function differences(a: Snapshot, b: Snapshot): string[] {
  const paths = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return paths.filter((p) => a[p] !== b[p]).map((p) => `${p}: ${a[p] ?? "(none)"} | ${b[p] ?? "(none)"}`);
}

describe("convergence soak", () => {
  it.each(SEEDS)(
    "seed %i: watchers alone converge after the writers stop, losing no version",
    async (seed) => {
      const persist = tempDir("soak-server");
      const server = await RestartableServer.start(persist, GC_MS > 0 ? SOAK_GC_VARS : {});
      const workspace = newWorkspace();
      const env = cliEnv(workspace, { FERRY_URL: server.url });
      let collector: SoakCollector | null = null;
      const roots = Array.from({ length: HOSTS }, (_, i) => tempDir(`soak-${i}`));
      const traceDir = tempDir("soak-trace");
      const traces = roots.map((_, i) => join(traceDir, `host-${i}`));
      const random = prng(seed);
      const ledger = new Ledger();
      const writers = roots.map((root, i) => new Writer(`h${i}`, root, tempDir(`soak-grave-${i}`), random, ledger));
      try {
        const watchers = await Promise.all(
          roots.map((root, i) => startWatch(root, { ...env, FERRY_TRACE: traces[i] }, i === 2 ? "http" : "ws")),
        );
        // Large files written slowly on random hosts all along (issue 26 case 5), on a random stream of their own.
        if (GC_MS > 0) {
          const health = (await (await fetch(`${server.url}/v1/health`)).json()) as { packs?: string };
          expect(health.packs, "the GC soak runs with packs in R2").toBe("r2");
          collector = new SoakCollector(server.url, workspace, GC_MS);
        }
        const began = performance.now();
        let writing = true;
        const slow = new SlowWriter(roots, prng(seed * 7919), ledger).run(() => !writing);
        // Whole directories removed (rm -rf) and made again, with new and old content, on a stream of their own.
        const graves = roots.map((_, i) => tempDir(`soak-subtree-grave-${i}`));
        const subtree = new SubtreeWriter(roots, graves, prng(seed * 104729), ledger);
        const subtrees = subtree.run(() => !writing);
        // The server is down from a third of the operations to half of them.
        let phase: "up" | "down" | "restarted" = "up";
        for (let attempt = 0; ledger.ops < OPS && attempt < OPS * 10; attempt++) {
          if (phase === "up" && ledger.ops >= OPS / 3) {
            await server.stop();
            phase = "down";
          }
          if (phase === "down" && ledger.ops >= OPS / 2) {
            await server.restart(persist);
            phase = "restarted";
          }
          (writers[Math.floor(random() * HOSTS)] as Writer).act();
          await sleep(random() < 0.1 ? 50 + random() * 150 : random() * 5);
        }
        writing = false;
        await Promise.all([slow, subtrees]);
        console.log(`soak seed ${seed}: writers done in ${Math.round(performance.now() - began)} ms`);
        const stopped = performance.now();
        let trees: Snapshot[] = [];
        let server_: { root: string; tree: Snapshot } | null = null;
        for (;;) {
          // A watcher may be moving a path while it is read: such a snapshot is not settled.
          try {
            trees = roots.map((r) => snapshot(r));
          } catch (e) {
            if (typeof (e as NodeJS.ErrnoException).code !== "string" || performance.now() - stopped > SETTLE_MS)
              throw e;
            await sleep(100);
            continue;
          }
          const same = trees.every((t) => JSON.stringify(t) === JSON.stringify(trees[0]));
          if (same) {
            server_ = await serverTree(env);
            if (JSON.stringify(server_.tree) === JSON.stringify(trees[0])) break;
          }
          if (performance.now() - stopped > SETTLE_MS) break;
          await sleep(250);
        }
        const settledMs = Math.round(performance.now() - stopped);
        server_ ??= await serverTree(env);
        const gc = collector ? ` FERRY_SOAK_GC_MS=${GC_MS}, ${collector.summary()}` : "";
        const context = `seed ${seed} (FERRY_SOAK_SEEDS=${seed} FERRY_SOAK_OPS=${OPS}${gc}), ${ledger.ops} ops, ${ledger.skipped} skipped, ${ledger.raced} raced, subtrees ${subtree.removed} removed ${subtree.made} made`;
        for (const [i, w] of watchers.entries()) {
          expect(w.child.exitCode, `${context}: watcher ${i} exited: ${w.log.slice(-10).join("")}`).toBeNull();
        }
        for (const [i, tree] of trees.entries()) {
          const diff = differences(tree, server_.tree);
          if (diff.length === 0) continue;
          // What the host would do next, for the failure message: its watcher is stopped to free the store.
          const w = watchers[i] as Watcher;
          w.child.kill("SIGTERM");
          await new Promise((resolve) => w.child.once("exit", resolve));
          const status = (await ferryRun(["status", roots[i] as string, "--json"], env)).stdout;
          const records = storeRecords(roots[i] as string, diff);
          const history = historyOf(
            seed,
            `host ${i} differs: ${diff.join("; ")}`,
            diff.map((d) => ({ path: d.slice(0, d.indexOf(": ")) })),
            traces,
            ledger.log,
          );
          expect(
            diff,
            `${context}: host ${i} differs from the server ${settledMs} ms after the writers stopped\nstatus: ${status}\nrecords: ${records}\n${w.log.slice(-10).join("")}\n${history}`,
          ).toEqual([]);
        }
        if (collector) {
          // What the run condemned is deleted now; the tree must be the one the hosts converged on, every byte there.
          await collector.finish();
          const converged = server_.tree;
          server_ = await serverTree(env);
          expect(differences(server_.tree, converged), `${context}: the tree after the last collections`).toEqual([]);
        }
        const present = contentDigests(server_.root);
        const lost = [...ledger.owed].filter(([d]) => !present.has(d)).map(([digest, v]) => ({ ...v, digest }));
        if (lost.length > 0) {
          expect(
            lost.map((v) => v.what),
            `${context}: versions lost\n${historyOf(seed, `lost: ${lost.map((v) => `${v.digest.slice(0, 10)} ${v.what}`).join("; ")}`, lost, traces, ledger.log)}`,
          ).toEqual([]);
        }
        if (collector) {
          expect(await deepCheck(server.url, workspace), `${context}: check --deep after convergence`).toEqual([]);
        }
        const gcEnd = collector ? `; with the last two collections ${collector.summary()}` : "";
        console.log(`soak ${context}: converged in ${settledMs} ms, ${ledger.owed.size} versions kept${gcEnd}`);
      } finally {
        await collector?.stop();
        await server.close();
      }
    },
    120_000 + OPS * 200,
  );
});
