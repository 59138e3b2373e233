/**
 * A `ferry sync --watch` serving the directory's other commands
 * (client/cli/resident-server.ts): a push, pull, sync or status of a
 * directory a watch holds is run by the watch, with the same output, exit
 * status and effect as in its own process, instead of being refused with
 * store_locked. Real processes (the `ferry` launcher), the real local server.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { FERRY_VERSION } from "../../client/version.ts";
import {
  childrenEndedAfterEach,
  cliEnv,
  endChild,
  ferry,
  ferryAsync,
  ferryRun,
  json,
  outputOf,
  serverStats,
} from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const running = childrenEndedAfterEach();

const SOCKET = join(".ferry", "resident.sock");

interface Watching {
  readonly child: ChildProcess;
  log(): string;
}

/** Starts `ferry sync <dir> --watch` and resolves once it serves commands (its socket is there). */
async function startWatch(dir: string, env: NodeJS.ProcessEnv, extra: readonly string[] = []): Promise<Watching> {
  const child = ferryAsync(["sync", dir, "--watch", "--interval", "600000", ...extra], env);
  running.push(child);
  const log = outputOf(child);
  await until(
    () => `the watch of ${dir} to serve: ${log()}`,
    () => /watching/.test(log()) && existsSync(join(dir, SOCKET)),
  );
  if (child.exitCode !== null) throw new Error(`the watch exited: ${log()}`);
  return { child, log };
}

async function until(what: string | (() => string), done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A fresh workspace, a directory in it holding a.txt, and a watch of the directory serving commands. */
async function watched(label: string, extra: readonly string[] = [], url?: string) {
  const ws = newWorkspace();
  const env = cliEnv(ws, url ? { FERRY_URL: url } : {});
  const dir = tempDir(label);
  writeTree(dir, { "a.txt": "alpha\n" });
  const watch = await startWatch(dir, env, extra);
  return { ws, env, dir, watch };
}

/** Each host verb on `dir` once, in its usual forms. */
function everyVerb(dir: string, env: NodeJS.ProcessEnv) {
  return {
    status: ferry(["status", dir], env),
    sync: ferry(["sync", dir], env),
    syncJson: ferry(["sync", dir, "--json"], env),
    push: ferry(["push", dir, "-v"], env),
    pull: ferry(["pull", dir, "--json"], env),
    dryRun: ferry(["sync", dir, "--dry-run"], env),
  };
}

/** What a summary line says, without its time. */
const untimed = (text: string) => text.replace(/, \d+ ms/g, ", N ms").replace(/"ms":[\d.e-]+/g, '"ms":0');

/** The workspace as a fresh host pulls it. */
function serverTree(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const dir = tempDir("resident-probe");
  const r = ferry(["pull", dir, "--memory"], env);
  if (r.status !== 0) throw new Error(r.stderr);
  return snapshot(dir, (p) => p.startsWith(".ferry"));
}

describe("ferry sync served by a running watch", () => {
  it("runs sync, push, pull and status with the output, exit status and effect of its own process", async () => {
    const { ws, env, dir, watch } = await watched("resident");
    const mode = lstatSync(join(dir, SOCKET)).mode & 0o777;
    expect(mode).toBe(0o600);

    // Served: in its own process it would meet the watch's lock (store_locked).
    const served = everyVerb(dir, env);
    for (const r of Object.values(served)) expect([r.status, r.stderr]).toEqual([0, ""]);
    await endChild(watch.child, "SIGINT");
    expect(existsSync(join(dir, SOCKET))).toBe(false);

    const own = everyVerb(dir, env);
    for (const key of Object.keys(own) as (keyof typeof own)[]) {
      expect({
        key,
        status: served[key].status,
        stdout: untimed(served[key].stdout),
        stderr: served[key].stderr,
      }).toEqual({
        key,
        status: own[key].status,
        stdout: untimed(own[key].stdout),
        stderr: own[key].stderr,
      });
    }
    expect(served.status.stdout).toMatch(/^ferry status: 0 to push, 0 to pull/);
    expect(json(served.syncJson)).toMatchObject({ workspace: ws, entriesSent: 0, roundTrips: 1 });
  });

  it("pushes what changed on disk right before it, whatever the watch saw (a full rescan)", async () => {
    const { ws, env, dir } = await watched("resident-rescan");
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) files[`d${i % 7}/f${i}.txt`] = `file ${i}\n`;
    writeTree(dir, files);
    const r = ferry(["sync", dir, "--json"], env);
    expect([r.status, r.stderr]).toEqual([0, ""]);
    // The moment the served sync has answered, the server has every file (the watch may have sent some itself).
    expect(serverTree(env)).toEqual(snapshot(dir, (p) => p.startsWith(".ferry")));
    expect((await serverStats(ws)).files).toBe(201);
  });

  it("pulls what another host pushed, into the watched directory", async () => {
    const { env, dir } = await watched("resident-pull", ["--transport", "http"]);
    const other = tempDir("resident-other");
    writeTree(other, { "b.txt": "beta\n" });
    expect(ferry(["push", other], env).status).toBe(0);
    const r = ferry(["pull", dir, "--json"], env);
    expect(r.status).toBe(0);
    expect(json<{ received: { path: string }[] }>(r).received.map((c) => c.path)).toEqual(["b.txt"]);
    expect(snapshot(dir, (p) => p.startsWith(".ferry"))).toHaveProperty("b.txt");
  });

  it("runs two commands handed to it at once, one after the other, both whole", async () => {
    const { env, dir } = await watched("resident-two");
    writeTree(dir, { "b.txt": "beta\n", "c/d.txt": "delta\n" });
    const [one, two] = await Promise.all([
      ferryRun(["sync", dir, "--json"], env),
      ferryRun(["push", dir, "--json"], env),
    ]);
    for (const r of [one, two]) expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(serverTree(env)).toEqual(snapshot(dir, (p) => p.startsWith(".ferry")));
  });

  it("leaves a command it was not given to the command's own process (and the lock's refusal says why)", async () => {
    const { env, dir } = await watched("resident-refuse");
    const cases: [readonly string[], NodeJS.ProcessEnv, RegExp][] = [
      [["sync", dir, "-w", newWorkspace()], env, /another workspace or server/],
      [["sync", dir, "--url", "http://127.0.0.1:1"], env, /another workspace or server/],
      [["push", dir, "--memory"], env, /--memory/],
      [["sync", dir, "--label", "elsewhere"], env, /another label/],
      [["sync", dir, "--ignore", "*.log"], env, /another --ignore/],
      [["sync", dir], { ...env, FERRY_SECRET: "another-secret" }, /another token/],
      [["sync", dir, "--token", "given"], env, /another token/],
    ];
    for (const [args, e, why] of cases) {
      const r = ferry(args, e);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr).toMatch(/^ferry: store_locked: .* \(its watch would not run this command: /);
      expect(r.stderr).toMatch(why);
    }
    // Another transport prints the same: served.
    expect(ferry(["status", dir, "--transport", "http"], env).status).toBe(0);
  });

  it("replaces a socket a killed watch left, and a command meanwhile runs in its own process", async () => {
    const { ws, env, dir, watch: first } = await watched("resident-stale");
    await endChild(first.child, "SIGKILL");
    expect(lstatSync(join(dir, SOCKET)).isSocket()).toBe(true);
    writeTree(dir, { "b.txt": "beta\n" });
    const own = ferry(["sync", dir, "--json"], env);
    expect([own.status, own.stderr]).toEqual([0, ""]);
    expect(json<{ entriesSent: number }>(own).entriesSent).toBe(1);
    await startWatch(dir, env);
    writeTree(dir, { "c.txt": "gamma\n" });
    const served = ferry(["sync", dir, "--json"], env);
    expect([served.status, served.stderr]).toEqual([0, ""]);
    expect((await serverStats(ws)).files).toBe(3);
  });

  it("serves a directory whose socket path is longer than a socket address holds", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = join(tempDir("resident-deep"), "d".repeat(60), "e".repeat(60));
    mkdirSync(dir, { recursive: true });
    writeTree(dir, { "a.txt": "alpha\n" });
    expect(Buffer.byteLength(join(dir, SOCKET))).toBeGreaterThan(108);
    await startWatch(dir, env);
    writeTree(dir, { "b.txt": "beta\n" });
    const r = ferry(["sync", dir], env);
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect((await serverStats(ws)).files).toBe(2);
  });

  it("refuses malformed requests and goes on serving", async () => {
    const { env, dir, watch } = await watched("resident-bad");
    const path = join(dir, SOCKET);
    const requests = [
      "not json\n",
      "[1,2]\n",
      '{"wire":1}\n',
      `${JSON.stringify({ wire: 1, version: "0.1.0", argv: ["sync", dir], cwd: "/", env: { HOME: "/" } })}\n`,
      `${JSON.stringify({ wire: 1, version: "0.1.0", argv: ["sync", dir, "--watch"], cwd: "/", env: {} })}\n`,
      `${JSON.stringify({ wire: 1, version: "0.1.0", argv: ["gc", dir], cwd: "/", env: {} })}\n`,
      `${JSON.stringify({ wire: 1, version: "0.1.0", argv: ["sync", "/"], cwd: "/", env: {} })}\n`,
      `${JSON.stringify({ wire: 1, version: "9.9.9", argv: ["sync", dir], cwd: "/", env: {} })}\n`,
      Buffer.from([0xff, 0xfe, 0x00, 0x0a]),
      "x".repeat(70 * 1024),
    ];
    for (const bytes of requests) {
      const answer = await rawExchange(path, bytes);
      expect(answer, String(bytes).slice(0, 60)).toMatch(/^\{"refused":"[^\n]*"\}\n$/);
    }
    expect(watch.child.exitCode).toBeNull();
    const r = ferry(["status", dir], env);
    expect([r.status, r.stderr]).toEqual([0, ""]);
  });

  it("gives up on a watch that does not answer (stopped), with an error and no second run", async () => {
    const { env, dir, watch } = await watched("resident-stopped");
    watch.child.kill("SIGSTOP");
    const started = Date.now();
    const r = await ferryRun(["sync", dir], env);
    const waited = Date.now() - started;
    watch.child.kill("SIGCONT");
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^ferry: resident_timeout: the ferry sync --watch holding .* did not answer for 10 s/);
    expect(waited).toBeGreaterThanOrEqual(10_000);
    expect(waited).toBeLessThan(30_000);
    // Resumed, it serves again.
    const again = ferry(["status", dir], env);
    expect([again.status, again.stderr]).toEqual([0, ""]);
  });

  describe("with the server's answers held", () => {
    let proxy: HoldingProxy | null = null;
    afterEach(async () => {
      await proxy?.close();
      proxy = null;
    });

    it("reports a watch killed while it runs the command, and does not run it again", async () => {
      proxy = await HoldingProxy.start(inject("ferryUrl"));
      // Over HTTP, polling never: the one hello held is the served sync's.
      const { env, dir, watch } = await watched("resident-killed", ["--transport", "http"], proxy.url);
      proxy.hold = true;
      const client = ferryRun(["sync", dir], env);
      await until("the served sync's hello", () => proxy?.held.length !== 0);
      await endChild(watch.child, "SIGKILL");
      proxy.release();
      const r = await client;
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(
        /^ferry: resident_lost: the ferry sync --watch holding .* ended while it ran this command/,
      );
      // The watch's first sync and the served one; the client ran none of its own.
      expect(proxy.hellos).toBe(2);
    });

    it("runs a command to its end when its client is killed", async () => {
      proxy = await HoldingProxy.start(inject("ferryUrl"));
      const { ws, env, dir, watch } = await watched("resident-client-killed", ["--transport", "http"], proxy.url);
      // Pushed past the proxy: the watch (over HTTP, polling never) does not hear of it; only the pull fetches it.
      const other = tempDir("resident-other");
      writeTree(other, { "b.txt": "beta\n" });
      expect(ferry(["push", other, "--memory"], cliEnv(ws)).status).toBe(0);
      proxy.hold = true;
      const client = ferryAsync(["pull", dir], env);
      running.push(client);
      await until("the served pull's hello", () => proxy?.held.length !== 0);
      await endChild(client, "SIGKILL");
      proxy.hold = false;
      proxy.release();
      await until("b.txt pulled", () => existsSync(join(dir, "b.txt")));
      expect(watch.child.exitCode).toBeNull();
      // Not spawnSync: this process is the proxy it goes through.
      const r = await ferryRun(["status", dir], env);
      expect([r.status, r.stderr]).toEqual([0, ""]);
      expect(r.stdout).toMatch(/^ferry status: 0 to push, 0 to pull/);
    });
  });
});

describe("a watch's socket, attacked", () => {
  it("serves a command while 70 other connections sit on its socket without a request", async () => {
    const { env, dir } = await watched("resident-crowd");
    const idle = await Promise.all(Array.from({ length: 70 }, () => connected(join(dir, SOCKET))));
    try {
      const r = await ferryRun(["status", dir], env);
      expect([r.status, r.stderr]).toEqual([0, ""]);
    } finally {
      for (const socket of idle) socket.destroy();
    }
  });

  it("goes on serving while one client sends half a request and another never reads its answer", async () => {
    const { env, dir } = await watched("resident-half");
    writeTree(dir, Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`many/${i}.txt`, `${i}\n`])));
    const path = join(dir, SOCKET);
    const half = await connected(path);
    half.write('{"wire":1,"version":');
    // The built CLI's version carries its build; the watch says which it is when refusing another.
    const version = /this watch is ferry (\S+),/.exec(await rawExchange(path, request("0", ["status", dir], {})))?.[1];
    expect(version).toMatch(new RegExp(`^${FERRY_VERSION.replaceAll(".", "\\.")}\\+`));
    const deaf = await connected(path);
    const { FERRY_URL, FERRY_WORKSPACE, FERRY_SECRET } = env;
    deaf.write(request(String(version), ["sync", dir, "-v"], { FERRY_URL, FERRY_WORKSPACE, FERRY_SECRET }));
    // Admitted (its sync queued before the status below), then never read again.
    await firstLine(deaf, /^\{"accepted":\d+\}$/);
    deaf.pause();
    try {
      const r = await ferryRun(["status", dir], env);
      expect([r.status, r.stderr]).toEqual([0, ""]);
      expect(r.stdout).toMatch(/^ferry status: 0 to push, 0 to pull/);
    } finally {
      half.destroy();
      deaf.destroy();
    }
  });

  it("runs a command itself when the socket's path holds a file, a directory or a symlink to another watch's socket", async () => {
    const { env: otherEnv, dir: other } = await watched("resident-other-watch");
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = tempDir("resident-planted");
    writeTree(dir, { "a.txt": "alpha\n" });
    expect(ferry(["sync", dir], env).status).toBe(0);
    const path = join(dir, SOCKET);
    const plants: [string, () => void][] = [
      ["a file", () => writeFileSync(path, "not a socket\n")],
      ["a directory", () => mkdirSync(path)],
      ["a symlink to another watch's socket", () => symlinkSync(join(other, SOCKET), path)],
    ];
    for (const [i, [what, plant]] of plants.entries()) {
      rmSync(path, { recursive: true, force: true });
      plant();
      writeTree(dir, { [`planted-${i}.txt`]: `${what}\n` });
      const r = ferry(["sync", dir, "--json"], env);
      expect([what, r.status, r.stderr]).toEqual([what, 0, ""]);
      expect(json<{ entriesSent: number }>(r).entriesSent, what).toBe(1);
    }
    expect((await serverStats(ws)).files).toBe(4);
    // The other watch served none of it.
    expect(ferry(["status", other], otherEnv).status).toBe(0);
  });
});

/** A connection to the socket at `path`, once connected. */
function connected(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path });
    socket.once("connect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** A request line for the watch's socket, as resident-client.ts writes one. */
function request(version: string, argv: readonly string[], env: NodeJS.ProcessEnv): string {
  return `${JSON.stringify({ wire: 1, version, argv, cwd: "/", env })}\n`;
}

/** Waits for the first line `socket` answers and checks it against `expected`. */
function firstLine(socket: Socket, expected: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (d: Buffer) => {
      text += d.toString();
      const end = text.indexOf("\n");
      if (end < 0) return;
      socket.off("data", onData);
      const line = text.slice(0, end);
      if (expected.test(line)) resolve();
      else reject(new Error(`answered ${line}`));
    };
    socket.on("data", onData);
    socket.once("error", reject);
  });
}

/** Sends `bytes` on the socket at `path` and returns all it answers before closing. */
function rawExchange(path: string, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path });
    let answer = "";
    socket.on("data", (d: Buffer) => {
      answer += d.toString();
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
    socket.write(bytes);
  });
}

/** An HTTP proxy to the test server that holds each `hello` while `hold` is set, until `release`. */
class HoldingProxy {
  hold = false;
  hellos = 0;
  readonly held: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(upstream: string): Promise<HoldingProxy> {
    let proxy: HoldingProxy | null = null;
    const target = new URL(upstream);
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const forward = () => {
        const up = httpRequest(
          { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        up.on("error", () => res.destroy());
        req.pipe(up);
      };
      if (req.url?.endsWith("/hello")) {
        (proxy as HoldingProxy).hellos++;
        if (proxy?.hold) {
          proxy.held.push(forward);
          return;
        }
      }
      forward();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    proxy = new HoldingProxy(server, `http://127.0.0.1:${address.port}`);
    return proxy;
  }

  release(): void {
    for (const forward of this.held.splice(0)) forward();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
