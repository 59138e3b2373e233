/**
 * The `ferry serve` process itself killed (SIGKILL) at a seeded moment while
 * one host pushes its edits and another pulls them, then started again on
 * the same data directory. Each client run ends (done, or one error line and
 * exit 1: it never hangs); after each restart the server still holds every
 * position a host was told was acknowledged (same epoch, no resync, `acked`
 * and rev never behind what the hosts' stores recorded); and at the end both
 * hosts and a new one hold exactly the editing host's tree, with nothing
 * pulled over it and nothing sent back, so nothing acknowledged was lost and
 * nothing the tree names lacks its bytes. Hosts reach the server through a
 * relay in this process that holds one port across restarts
 * (restartable-server.ts says why), so every CLI run here is asynchronous.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../client/store/sqlite-store.ts";
import { HttpTransport } from "../../client/transport/http-transport.ts";
import { compareCursors } from "../../protocol/cursor.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import { type CliResult, cliEnv, ferryAsync, ferryRun, json } from "./support/cli.ts";
import { edit, snapshotWithMtimes } from "./support/edits.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { type ServeProcess, startServeProcess } from "./support/serve-process.ts";
import { prng } from "./support/soak-writer.ts";
import { pseudoRandom } from "./support/tree.ts";
import { CuttingProxy } from "./ws-proxy.ts";

const running: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
  await cleanup();
});

const SEEDS = [1, 2].map((n) => Number(process.env.FERRY_FUZZ_SEED ?? 0) + n);
const ROUNDS = 4;
/** Longer than a client's retries last (DEFAULT_RETRY: six tries, about 3 s of backoff) plus a loaded start. */
const CLIENT_LIMIT_MS = 120_000;

/** A server process behind a relay whose port stays the same when the process is killed and started again. */
class KillableServer {
  private constructor(
    private readonly data: string,
    private readonly relay: CuttingProxy,
    private server: ServeProcess | null,
  ) {}

  static async start(data: string): Promise<KillableServer> {
    const server = await startServeProcess(data);
    const killable = new KillableServer(data, await CuttingProxy.start(server.url), server);
    running.push(() => killable.close());
    return killable;
  }

  get url(): string {
    return this.relay.url;
  }

  /** SIGKILL, wherever it is; new connections are reset until `restart`. */
  async kill(): Promise<void> {
    this.relay.retarget(null);
    await this.server?.stop("SIGKILL");
    this.server = null;
  }

  async restart(): Promise<void> {
    await this.kill();
    this.server = await startServeProcess(this.data);
    this.relay.retarget(this.server.url);
  }

  async close(): Promise<void> {
    await this.kill();
    await this.relay.close();
  }
}

/** `ferry sync <dir>` to its end, failed if it outlives CLIENT_LIMIT_MS (a client that hangs on a dead server). */
async function syncToEnd(dir: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const child = ferryAsync(["sync", dir], env);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const hung = setTimeout(() => child.kill("SIGKILL"), CLIENT_LIMIT_MS);
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  clearTimeout(hung);
  return { code, stderr };
}

/**
 * What the host at `root` recorded as acknowledged and pulled is still so on
 * the server: a hello that only looks (changes nothing) gets the same epoch,
 * no resync, an `acked` at or past the store's, and a rev at or past its pull.
 */
async function expectPositionKept(url: string, workspace: string, root: string, what: string): Promise<void> {
  const store = openStore("disk", root);
  const transport = new HttpTransport(endpointFor(workspace, "rw", url));
  try {
    const position = store.position();
    const hello = await transport.call("hello", {
      version: PROTOCOL_VERSION,
      hostId: store.hostId,
      hostRev: position.hostRev,
      ...(position.pull ? { pull: position.pull } : {}),
      capabilities: ["inline-objects"],
      look: true,
    });
    expect(hello.resync, `${what}: resync`).toBe(false);
    expect(
      compareCursors(hello.acked, position.acked),
      `${what}: acked ${JSON.stringify(hello.acked)} against ${JSON.stringify(position.acked)}`,
    ).toBeGreaterThanOrEqual(0);
    if (position.pull) {
      expect(Buffer.from(hello.epoch).toString("hex"), `${what}: epoch`).toBe(
        Buffer.from(position.pull.epoch).toString("hex"),
      );
      expect(hello.rev, `${what}: the server's rev against the pull cursor`).toBeGreaterThanOrEqual(
        position.pull.cursor.rev,
      );
    }
  } finally {
    store.close();
    await transport.close();
  }
}

describe("ferry serve killed mid-push and mid-pull", { timeout: 600_000 }, () => {
  it.each(SEEDS)(
    "seed %i: every run ends, no acknowledged position goes back, and every host ends with the editor's tree",
    async (seed) => {
      const random = prng(seed);
      const server = await KillableServer.start(tempDir("serve-kill-data"));
      const ws = newWorkspace();
      const env = cliEnv(ws, { FERRY_URL: server.url });
      const editor = tempDir("serve-kill-editor");
      const reader = tempDir("serve-kill-reader");
      for (let i = 0; i < 40; i++) edit(editor, random, i);
      const first = await ferryRun(["sync", editor], env);
      expect(first.status, `seed ${seed}: the first sync: ${first.stderr}`).toBe(0);
      const cut: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // Enough to push and pull for a while: many small files and a few of several chunks.
        for (let i = 0; i < 150; i++) writeFileSync(join(editor, `n${round}-${i}.txt`), `round ${round} file ${i}\n`);
        for (let i = 0; i < 3; i++) writeFileSync(join(editor, `big${round}-${i}.bin`), pseudoRandom(1_500_000, round));
        for (let i = 1 + Math.floor(random() * 10); i > 0; i--) edit(editor, random, 1000 * (round + 1) + i);
        const runs = [editor, reader].map((dir) => syncToEnd(dir, env));
        await new Promise((r) => setTimeout(r, Math.floor(random() * 3000)));
        await server.kill();
        for (const [i, run] of (await Promise.all(runs)).entries()) {
          const what = `seed ${seed} round ${round} ${i === 0 ? "editor" : "reader"}`;
          expect([0, 1], `${what}: ${run.stderr}`).toContain(run.code);
          if (run.code === 1) {
            expect(run.stderr, what).toMatch(/^ferry: [a-z_]+: /m);
            cut.push(/^ferry: ([a-z_]+): /m.exec(run.stderr)?.[1] ?? "");
          }
        }
        await server.restart();
        await expectPositionKept(server.url, ws, editor, `seed ${seed} round ${round} editor`);
        await expectPositionKept(server.url, ws, reader, `seed ${seed} round ${round} reader`);
      }
      const wrote = snapshotWithMtimes(editor);
      const sync = async (dir: string): Promise<CliResult> => {
        const r = await ferryRun(["sync", dir, "--json"], env);
        expect(r.status, `seed ${seed} ${dir}: ${r.stderr}`).toBe(0);
        return r;
      };
      expect(json<{ received: unknown[] }>(await sync(editor)).received, `seed ${seed}: the editor received`).toEqual(
        [],
      );
      expect(json<{ sent: unknown[] }>(await sync(reader)).sent, `seed ${seed}: the reader sent`).toEqual([]);
      expect(snapshotWithMtimes(editor), `seed ${seed}: the editor's tree changed`).toEqual(wrote);
      expect(snapshotWithMtimes(reader), `seed ${seed}: the reader's tree`).toEqual(wrote);
      const fresh = tempDir("serve-kill-fresh");
      await sync(fresh);
      expect(snapshotWithMtimes(fresh), `seed ${seed}: a new host's tree`).toEqual(wrote);
      for (const dir of [editor, reader, fresh]) {
        expect(json(await sync(dir)), `seed ${seed} ${dir}: a further sync`).toMatchObject({ sent: [], received: [] });
      }
      console.log(
        `serve-kill seed ${seed}: ${cut.length} of ${2 * ROUNDS} runs cut short by the kill (${cut.join(", ")})`,
      );
    },
  );
});
