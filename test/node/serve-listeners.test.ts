/**
 * `ferry serve` lets nobody in but through its own port: the process tree
 * (ferry serve, workerd) listens on that one socket and nothing else (no
 * loopback server for a tool's own use, which any local user could reach,
 * no inspector unless asked for, none for its R2 bucket), whatever --verbose
 * and --host say; and Miniflare's old file write (`/core/store-temp-file`,
 * issue 28) reaches nothing on any port it has.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "./support/hosts.ts";
import { listenersOf, processTree } from "./support/listeners.ts";
import { type ServeProcess, serversStoppedAfterEach, startServeProcess } from "./support/serve-process.ts";

const running = serversStoppedAfterEach();

async function serve(args: readonly string[] = []): Promise<ServeProcess> {
  const server = await startServeProcess(tempDir("serve-data"), { args });
  running.push(server);
  return server;
}

const FLAG_SETS: { flags: string[] }[] = [
  { flags: [] },
  { flags: ["--verbose"] },
  { flags: ["--verbose", "--host", "0.0.0.0"] },
];

describe("ferry serve's sockets", () => {
  it.each(FLAG_SETS)("are its public port alone (flags $flags)", async ({ flags }) => {
    const server = await serve(flags);
    const pids = processTree(server.child.pid as number);
    expect(pids.length, "ferry serve and its runtime").toBeGreaterThanOrEqual(2);
    const listeners = listenersOf(pids);
    const expected = flags.includes("0.0.0.0") ? "0.0.0.0" : "127.0.0.1";
    expect(listeners.map(({ kind, address, port }) => ({ kind, address, port }))).toEqual([
      { kind: "tcp", address: expected, port: server.port },
    ]);
    // With its R2 bucket bound (client/serve/local-r2.ts): the bucket's services add no socket.
    expect(await (await fetch(`${server.url}/v1/health`)).json()).toMatchObject({ packs: "r2" });
  });

  it.each(FLAG_SETS)("write no file for a store-temp-file request on any of them (flags $flags)", async ({ flags }) => {
    const server = await serve(flags);
    const target = join(tempDir("serve-target"), "private");
    mkdirSync(target, { mode: 0o700 });
    const ports = new Set([server.port, ...listenersOf(processTree(server.child.pid as number)).map((l) => l.port)]);
    for (const port of ports) {
      const traversal = `/../../../../../../../..${target}/written-through-${port}`;
      await fetch(`http://127.0.0.1:${port}/core/store-temp-file?prefix=x&extension=${encodeURIComponent(traversal)}`, {
        method: "POST",
        body: "owned\n",
      }).catch(() => undefined);
      expect(existsSync(`${target}/written-through-${port}`), `written through port ${port}`).toBe(false);
    }
  });
});
