/**
 * A real `ferry serve` process (bin/ferry.cjs, the built CLI) on a free port
 * and its own data directory, with the test secret, for the tests that kill,
 * restart or attack the server itself; and a push-then-pull round trip that
 * proves a server still serves.
 */
import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import net from "node:net";
import { afterEach, expect, inject } from "vitest";
import { SyncEngine } from "../../../client/engine/sync.ts";
import { openStore } from "../../../client/store/sqlite-store.ts";
import { HttpTransport } from "../../../client/transport/http-transport.ts";
import { signToken } from "../../../protocol/token.ts";
import { FERRY_BIN } from "./cli.ts";
import { cleanup, newWorkspace, tempDir } from "./hosts.ts";
import { snapshot, writeTree } from "./tree.ts";

export interface ServeProcess {
  readonly url: string;
  readonly port: number;
  readonly storage: string;
  readonly child: ChildProcess;
  /** Everything it wrote to stdout so far (the `--json` line first). */
  stdout(): string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` and resolves with the exit code once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ServeOptions {
  readonly args?: readonly string[];
  readonly cwd?: string;
  /** Leave out --data (the default data directory and the adoption of .wrangler/state are under test). */
  readonly defaultData?: boolean;
  /** Its FERRY_SECRET (default the suite's), or null for none (the development secret). */
  readonly secret?: string | null;
  /** More environment variables for it (TMPDIR, say). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The serve processes a test file starts: push each one; after each test
 * every one is killed and the test's directories removed. Call once, at the
 * file's top level.
 */
export function serversStoppedAfterEach(): ServeProcess[] {
  const running: ServeProcess[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")));
    await cleanup();
  });
  return running;
}

/** Starts `ferry serve --port 0 --json` and resolves once it printed its URL. */
export function startServeProcess(dataDir: string, options: ServeOptions = {}): Promise<ServeProcess> {
  const args = ["serve", "--port", "0", "--json", ...(options.defaultData ? [] : ["--data", dataDir])];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    FERRY_SECRET: options.secret ?? inject("ferrySecret"),
  };
  if (options.secret === null) delete env.FERRY_SECRET;
  delete env.PORT;
  const child = spawn(process.execPath, [FERRY_BIN, ...args, ...(options.args ?? [])], {
    env,
    cwd: options.cwd ?? process.cwd(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let settled = false;
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      if (settled || !out.includes("\n")) return;
      settled = true;
      let ready: { url: string; storage: string };
      try {
        ready = JSON.parse(out.slice(0, out.indexOf("\n"))) as typeof ready;
        // An error printed as JSON (port_in_use, ...) is not the ready line either.
        if (typeof ready.url !== "string") throw new Error("no url");
      } catch {
        // Not the --json line first: fail the start, and leave no server behind (no test holds it to stop).
        child.kill("SIGKILL");
        reject(new Error(`ferry serve printed something else before its --json line:\n${out}${err}`));
        return;
      }
      resolve({
        url: ready.url,
        port: Number(new URL(ready.url).port),
        storage: ready.storage,
        child,
        stdout: () => out,
        stderr: () => err,
        stop: (signal = "SIGTERM") => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`ferry serve exited ${code} before it was ready:\n${out}${err}`)));
  });
}

export function tokenFor(workspace: string): string {
  return signToken({ ws: workspace, rights: "rw", exp: Math.floor(Date.now() / 1000) + 3600 }, inject("ferrySecret"));
}

/** GET /v1/workspaces/{ws}/stats as JSON. */
export async function statsOf(url: string, workspace: string): Promise<{ epoch: string; rev: number; files: number }> {
  const res = await fetch(`${url}/v1/workspaces/${workspace}/stats`, {
    headers: { authorization: `Bearer ${tokenFor(workspace)}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { epoch: string; rev: number; files: number };
}

/** Pushes `files` from a fresh host to `workspace` over HTTP and returns the root it pushed from. */
export async function pushTree(
  url: string,
  workspace: string,
  files: Record<string, string | Uint8Array>,
): Promise<string> {
  const root = tempDir("serve-push");
  writeTree(root, files);
  await syncOnce(url, workspace, root);
  return root;
}

/** Pulls `workspace` into a fresh directory and returns it. */
export async function pullTree(url: string, workspace: string): Promise<string> {
  const root = tempDir("serve-pull");
  await syncOnce(url, workspace, root);
  return root;
}

async function syncOnce(url: string, workspace: string, root: string): Promise<void> {
  const store = openStore("memory", root);
  const transport = new HttpTransport({ url, workspace, token: tokenFor(workspace) });
  try {
    await new SyncEngine({ root, store, transport }).sync();
  } finally {
    store.close();
    await transport.close();
  }
}

/** The server answers health to a new client and a fresh workspace makes a push-then-pull round trip intact. */
export async function expectServing(url: string): Promise<void> {
  expect(await healthOnNewConnection(url)).toMatchObject({ status: 200, body: { ok: true } });
  const workspace = newWorkspace();
  const files = { "a.txt": `alive ${workspace}\n`, "dir/b.bin": "x".repeat(70_000) };
  const from = await pushTree(url, workspace, files);
  expect(snapshot(await pullTree(url, workspace))).toEqual(snapshot(from));
}

/**
 * GET /v1/health on a connection of its own, closed after the answer. Not on
 * a kept-alive connection from fetch's pool: workerd closes a connection
 * idle for 5 s by its own clock (kj's HttpServer pipelineTimeout), and when
 * its one thread was busy across that deadline (three 8 MiB objects/get
 * answers are ~0.5 s of its CPU, seconds on a loaded machine) the timeout
 * wins over a request that arrived meanwhile: the connection is closed with
 * the request unanswered ("other side closed", or ECONNRESET when its bytes
 * were still unread). Any kept-alive connection may end that way, and a
 * client retries such a request (ferry's transports do); what these tests
 * claim is that the server answers a new client.
 */
export function healthOnNewConnection(url: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/v1/health`, { agent: false }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
        res.on("error", reject);
      })
      .on("error", reject);
  });
}

/**
 * Whether nothing listens on `port` any more: a connection is refused. Not
 * "a request fails": a runtime killed under load still has its listening
 * socket while the kernel tears the process down, so a connection may be
 * accepted and then reset, and the port is not yet free for the next server.
 */
export function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"));
  });
}
