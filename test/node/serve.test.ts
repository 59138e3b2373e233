/**
 * `ferry serve` as a process: what it prints, a taken port, a graceful stop
 * with a request in flight, storage that survives a restart, and the
 * adoption of a wrangler dev server's .wrangler/state.
 */
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { unstable_startWorker } from "wrangler";
import { FERRY_BIN } from "./support/cli.ts";
import { newWorkspace, tempDir } from "./support/hosts.ts";
import { helloBody, openSocket, postHead, readUntilClosed, statusOf } from "./support/raw-http.ts";
import {
  healthOnNewConnection,
  pullTree,
  pushTree,
  refusesConnections,
  type ServeProcess,
  serversStoppedAfterEach,
  startServeProcess,
  statsOf,
  tokenFor,
} from "./support/serve-process.ts";
import { snapshot } from "./support/tree.ts";

const running = serversStoppedAfterEach();

async function serve(dataDir: string, options: Parameters<typeof startServeProcess>[1] = {}): Promise<ServeProcess> {
  const server = await startServeProcess(dataDir, options);
  running.push(server);
  return server;
}

describe("ferry serve", () => {
  it("says its version to anyone and its storage directory only to a token for every workspace", async () => {
    const data = tempDir("serve-data");
    const server = await serve(data);
    expect(server.storage).toBe(data);
    const open = await (await fetch(`${server.url}/v1/health`)).json();
    expect(open).toEqual({ ok: true, version: expect.any(Number), server: expect.any(String), packs: "r2" });
    const operator = await fetch(`${server.url}/v1/health`, { headers: { authorization: `Bearer ${tokenFor("*")}` } });
    expect(await operator.json()).toMatchObject({ ok: true, storage: data });
  });

  it("logs a line per request on stderr with --verbose, none without, and keeps stdout to its --json line", async () => {
    const quiet = await serve(tempDir("serve-data"));
    const verbose = await serve(tempDir("serve-data"), { args: ["--verbose"] });
    for (const server of [quiet, verbose]) expect((await healthOnNewConnection(server.url)).status).toBe(200);
    await expect.poll(() => verbose.stderr(), { timeout: 10_000 }).toMatch(/GET \/v1\/health 200 OK/);
    expect(quiet.stderr()).not.toMatch(/health/);
    for (const server of [quiet, verbose]) expect(server.stdout()).toMatch(/^\{[^\n]*\}\n$/);
  });

  it("refuses a port another server holds with port_in_use, printing no banner", async () => {
    const first = await serve(tempDir("serve-data"));
    const second = spawnSync(
      process.execPath,
      [FERRY_BIN, "serve", "--port", String(first.port), "--data", tempDir("serve-data")],
      { env: { ...process.env, FERRY_SECRET: inject("ferrySecret") }, encoding: "utf8", timeout: 60_000 },
    );
    expect(second.status).toBe(1);
    expect(second.stdout).toBe("");
    // One line, not workerd's fatal exception and stack before it.
    expect(second.stderr).toMatch(/^ferry: port_in_use: 127\.0\.0\.1:\d+ is already in use[^\n]*\n$/);
    expect((await fetch(`${first.url}/v1/health`)).status).toBe(200);
  });

  it("refuses a retention --var that is not a duration before it starts", () => {
    for (const spec of ["FERRY_HISTORY:abc", "FERRY_UPLOAD_GRACE:1w", "FERRY_TOMBSTONE_HORIZON:-1d"]) {
      const r = spawnSync(
        process.execPath,
        [FERRY_BIN, "serve", "--port", "0", "--data", tempDir("serve-data"), "--var", spec],
        { env: { ...process.env, FERRY_SECRET: inject("ferrySecret") }, encoding: "utf8", timeout: 60_000 },
      );
      const [name, value] = spec.split(":");
      expect(r.status, spec).toBe(2);
      expect(r.stdout, spec).toBe("");
      expect(r.stderr, spec).toBe(
        `ferry: usage: --var ${name}: '${value}' is not a duration (seconds, or a number with s, m, h or d)\n`,
      );
    }
  });

  it("finishes a request in flight when stopped, then exits 0", async () => {
    const server = await serve(tempDir("serve-data"));
    const body = helloBody();
    const socket = await openSocket(server.port);
    const answer = readUntilClosed(socket);
    socket.write(postHead(newWorkspace(), "hello", [`Content-Length: ${body.length}`]));
    socket.write(body.subarray(0, 5));
    await new Promise((r) => setTimeout(r, 300)); // the request is in the server's hands
    const exit = server.stop("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    socket.end(body.subarray(5));
    expect(statusOf(await answer)).toBe(200);
    expect(await exit).toBe(0);
    expect(server.stderr()).toContain("SIGTERM: stopping");
    await expect(fetch(`${server.url}/v1/health`)).rejects.toThrow();
  });

  it("leaves no runtime behind when killed outright, so the port is free for the next start", async () => {
    const data = tempDir("serve-data");
    const first = await serve(data);
    expect(await first.stop("SIGKILL")).toBe(null);
    // workerd is the killed process's child; with nothing to stop it, it would go on holding the port.
    await expect.poll(() => refusesConnections(first.port), { timeout: 30_000 }).toBe(true);
    const second = await serve(data, { args: ["--port", String(first.port)] });
    expect((await fetch(`${second.url}/v1/health`)).status).toBe(200);
  });

  it("keeps every workspace across a restart: same epoch, same rev, same tree", async () => {
    const data = tempDir("serve-data");
    const workspace = newWorkspace();
    let server = await serve(data);
    const from = await pushTree(server.url, workspace, { "a.txt": "kept\n", "dir/b.txt": "also kept\n" });
    const before = await statsOf(server.url, workspace);
    expect(await server.stop("SIGINT")).toBe(0);

    server = await serve(data);
    expect(await statsOf(server.url, workspace)).toMatchObject({ epoch: before.epoch, rev: before.rev, files: 2 });
    expect(snapshot(await pullTree(server.url, workspace))).toEqual(snapshot(from));
  });

  it("copies the workspaces of an old wrangler dev .wrangler/state into its default data directory", async () => {
    const cwd = tempDir("serve-cwd");
    const workspace = newWorkspace();
    const wrangler = await unstable_startWorker({
      config: "wrangler.toml",
      bindings: { FERRY_SECRET: { type: "plain_text", value: inject("ferrySecret") } },
      dev: {
        server: { hostname: "127.0.0.1", port: 0 },
        inspector: false,
        persist: join(cwd, ".wrangler/state"),
        watch: false,
        logLevel: "error",
      },
    });
    let before: Awaited<ReturnType<typeof statsOf>>;
    try {
      await wrangler.ready;
      const url = (await wrangler.url).origin;
      await pushTree(url, workspace, { "from-wrangler.txt": "old server\n" });
      before = await statsOf(url, workspace);
    } finally {
      await wrangler.dispose();
    }

    const server = await serve(join(cwd, ".ferry-server"), { cwd, defaultData: true });
    expect(server.storage).toBe(join(cwd, ".ferry-server"));
    expect(server.stderr()).toContain("copied 1 workspace(s) from .wrangler/state");
    expect(await statsOf(server.url, workspace)).toMatchObject({ epoch: before.epoch, rev: before.rev, files: 1 });
    expect(existsSync(join(cwd, ".wrangler/state/v3/do"))).toBe(true);
  });
});

describe("the ferry CLI", () => {
  // A preload that fails any require of workerd or esbuild (the CLI bundle is CommonJS): only `serve` may load them.
  const forbidHeavy = () => {
    const file = join(tempDir("forbid-heavy"), "forbid-heavy.cjs");
    writeFileSync(
      file,
      `const Module = require("node:module");
       const resolve = Module._resolveFilename;
       Module._resolveFilename = function (request, ...rest) {
         const found = resolve.call(this, request, ...rest);
         if (/node_modules\\/(workerd|esbuild)\\//.test(found)) throw new Error("loaded " + found);
         return found;
       };`,
    );
    return file;
  };
  const run = (args: string[], preload: string) =>
    spawnSync(process.execPath, ["--require", preload, FERRY_BIN, ...args], {
      env: { ...process.env, FERRY_SECRET: inject("ferrySecret") },
      encoding: "utf8",
      timeout: 60_000,
    });

  it("loads workerd and esbuild only for serve", () => {
    const preload = forbidHeavy();
    expect(run(["token", "demo"], preload).status).toBe(0);
    const help = run(["serve", "--help"], preload);
    expect(help.status).toBe(0);
    for (const option of ["--data", "--port", "--host", "--verbose", "--json", "--var", "--inspector-port"])
      expect(help.stdout).toContain(option);
    // The hook does catch them: serve itself trips it.
    const served = run(["serve", "--port", "0", "--data", tempDir("serve-data")], preload);
    expect(served.status).not.toBe(0);
    expect(served.stderr).toMatch(/loaded .*node_modules\/(workerd|esbuild)\//);
  });
});
