/**
 * A cold `ferry sync` (its own process, no watch) when things go wrong on
 * the local side, the server's side, or both at once: the store is garbage
 * or another process holds the directory, the server is down or refuses the
 * token. Whatever order the command opens its store and its connection in,
 * it fails with one line naming one of the causes (and with --json, the same
 * error as one JSON line), exit status 1, no second error after it; and once
 * the causes are gone, a sync ends with the server holding the directory.
 */
import { realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, Socket } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, inject, it } from "vitest";
import { HttpTransport } from "../../client/transport/http-transport.ts";
import { cliEnv, ferryRun, json } from "./support/cli.ts";
import { cleanup, newWorkspace, openHost, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

/** A TCP relay to the test server that can go down and come back on the same port. */
class Relay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async up(): Promise<void> {
    const target = new URL(inject("ferryUrl"));
    const server = createServer((client) => {
      const upstream = new Socket();
      upstream.connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
}

type Local = "fine" | "garbage" | "garbage-root" | "locked";
type Remote = "up" | "down" | "refused";

const CAUSES: Record<Local | Remote, string | null> = {
  fine: null,
  up: null,
  garbage: "store_corrupt",
  "garbage-root": "store_corrupt",
  locked: "store_locked",
  down: "unavailable",
  refused: "unauthorized",
};

const CASES: [Local, Remote][] = (["fine", "garbage", "garbage-root", "locked"] as const).flatMap((l) =>
  (["up", "down", "refused"] as const).map((r): [Local, Remote] => [l, r]),
);

describe("a cold ferry sync that meets errors", () => {
  it.each(CASES)("with the store %s and the server %s", async (local, remote) => {
    const ws = newWorkspace();
    const relay = new Relay();
    await relay.up();
    const env = cliEnv(ws, { FERRY_URL: relay.url });
    const dir = tempDir("cold-errors");
    writeTree(dir, { "a.txt": "alpha\n", "sub/b.txt": "beta\n" });
    try {
      const first = await ferryRun(["sync", dir], env);
      expect([first.status, first.stderr]).toEqual([0, ""]);
      writeTree(dir, { "c.txt": "a change the failed sync must not lose\n" });

      let holder: Database.Database | null = null;
      const garbled = { garbage: "store.db", "garbage-root": "root.db" }[local as string];
      if (garbled !== undefined) {
        for (const f of ["-wal", "-shm"]) rmSync(join(dir, ".ferry", `${garbled}${f}`), { force: true });
        writeFileSync(join(dir, ".ferry", garbled), "this is not a database, and it is longer than a header\n");
      }
      const tree = snapshot(dir);
      if (local === "locked") {
        holder = new Database(join(dir, ".ferry", "root.db"));
        holder.pragma("locking_mode = EXCLUSIVE");
        holder.exec("BEGIN IMMEDIATE; COMMIT;");
      }
      if (remote === "down") await relay.down();
      const runEnv = remote === "refused" ? { ...env, FERRY_TOKEN: "v1.not-a-token.at-all" } : env;

      const causes = [CAUSES[local], CAUSES[remote]].filter((c): c is string => c !== null);
      for (const args of [
        ["sync", dir],
        ["sync", dir, "--json"],
      ]) {
        const r = await ferryRun(args, runEnv);
        const context = `${local}/${remote} ${args.join(" ")}: ${r.stdout}${r.stderr}`;
        if (causes.length === 0) {
          expect([r.status, r.stderr], context).toEqual([0, ""]);
          continue;
        }
        expect(r.status, context).toBe(1);
        const line = /^ferry: ([a-z_A-Z]+): [^\n]+\n$/.exec(r.stderr);
        expect(line, context).not.toBeNull();
        expect(causes, context).toContain(line?.[1]);
        if (line?.[1] === "store_corrupt") {
          // Named with the file and the way out, not SQLite's words; the tree is left as it was.
          expect(r.stderr, context).toContain(
            `${join(realpathSync(dir), ".ferry", garbled as string)} is not a ferry store (`,
          );
          expect(r.stderr, context).toContain("move .ferry aside to start again: the next sync reconciles");
          expect(snapshot(dir), context).toEqual(tree);
        }
        if (args.includes("--json")) expect(json<{ error: { code: string } }>(r).error.code, context).toBe(line?.[1]);
        else expect(r.stdout, context).toBe("");
      }

      holder?.close();
      if (garbled !== undefined) rmSync(join(dir, ".ferry", garbled));
      if (remote === "down") await relay.up();
      const after = await ferryRun(["sync", dir], env);
      expect([after.status, after.stderr], `${local}/${remote}: the sync after`).toEqual([0, ""]);
      const fresh = openHost(ws, { factory: (e) => new HttpTransport(e), storeKind: "memory" });
      await fresh.engine.sync();
      expect(snapshot(fresh.root)).toEqual(snapshot(dir));
    } finally {
      await relay.down();
    }
  });
});
